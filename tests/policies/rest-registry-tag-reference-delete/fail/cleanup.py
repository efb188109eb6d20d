import os

import requests

REGISTRY = "https://" + os.environ["CI_REGISTRY"]
name = os.environ["CI_PROJECT_PATH"]
headers = {"Authorization": "Bearer " + os.environ["REGISTRY_TOKEN"]}
# expect: rest-registry-tag-reference-delete col=29
requests.delete(f"{REGISTRY}/v2/{name}/tags/reference/old-build", headers=headers, timeout=30)
