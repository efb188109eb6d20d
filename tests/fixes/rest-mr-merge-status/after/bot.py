import os

import requests

API = os.environ["CI_API_V4_URL"]

mr = requests.get(f"{API}/projects/1/merge_requests/7").json()
if mr["detailed_merge_status"] == "mergeable":
    print("ready")
