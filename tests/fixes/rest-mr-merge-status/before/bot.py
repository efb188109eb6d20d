import os

import requests

API = os.environ["CI_API_V4_URL"]

mr = requests.get(f"{API}/projects/1/merge_requests/7").json()
if mr["merge_status"] == "can_be_merged":
    print("ready")
