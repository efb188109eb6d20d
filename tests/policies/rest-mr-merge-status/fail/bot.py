import os

import requests

BASE = os.getenv("CI_API_V4_URL")
mrs = requests.get(f"{BASE}/merge_requests", params={"scope": "all", "state": "opened"}).json()
# expect: rest-mr-merge-status col=38
ready = [m["iid"] for m in mrs if m["merge_status"] == "can_be_merged"]
