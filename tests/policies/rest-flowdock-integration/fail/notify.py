import os

import requests

API = os.environ["CI_API_V4_URL"]
PROJECT = os.environ["CI_PROJECT_ID"]
TOKEN = os.environ["FLOWDOCK_TOKEN"]
# expect: rest-flowdock-integration col=21
requests.put(f"{API}/projects/{PROJECT}/integrations/flowdock", data={"token": TOKEN}, timeout=30)
