import os

import requests

API = os.environ["CI_API_V4_URL"]

resp = requests.get(f"{API}/runners", params={"type": "project_type"})
for runner in resp.json():
    # expect: rest-runner-status-paused-active col=16
    if runner["status"] in ("active", "online"):
        print(runner["id"])
