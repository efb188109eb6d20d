import os

import requests

API = os.environ["CI_API_V4_URL"]

resp = requests.get(f"{API}/runners", params={"paused": "true", "type": "project_type"})
for runner in resp.json():
    print(runner["id"])
