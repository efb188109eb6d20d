import os

import requests

GITLAB = os.environ["GITLAB_URL"]
HEADERS = {"PRIVATE-TOKEN": os.environ["GITLAB_TOKEN"]}


def enable_pull_mirror(project_id, upstream):
    r = requests.put(
        f"{GITLAB}/api/v4/projects/{project_id}",
        headers=HEADERS,
        data={"mirror": True, "import_url": upstream, "mirror_trigger_builds": True},
    )
    r.raise_for_status()
