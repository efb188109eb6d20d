import os
import sys

import requests

API = os.environ["CI_API_V4_URL"]
PROJECT = os.environ["CI_PROJECT_ID"]

links = requests.get(f"{API}/projects/{PROJECT}/releases/{sys.argv[1]}/assets/links", timeout=30).json()
for link in links:
    if link["external"]:
        print(link["url"])
