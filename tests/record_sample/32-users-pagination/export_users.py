import os

import requests

API = os.environ["GITLAB_API"]
H = {"PRIVATE-TOKEN": os.environ["ADMIN_TOKEN"]}

page = 1
while True:
    users = requests.get(f"{API}/users", headers=H, params={"per_page": 100, "page": page}, timeout=30).json()
    if not users:
        break
    for u in users:
        print(u["username"])
    page += 1
