import os

import requests

API = os.environ["GITLAB_API"]
payload = {
    "username": "deploy-bot",
    "email": "deploy-bot@example.com",
    "name": "Deploy bot",
    "private_profile": None,
}
requests.post(f"{API}/users", headers={"PRIVATE-TOKEN": os.environ["ADMIN_TOKEN"]}, json=payload, timeout=30)
