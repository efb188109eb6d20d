import os

import requests

API = os.environ["CI_API_V4_URL"]
# expect: rest-environments-search-short col=85
requests.get(f"{API}/projects/{os.environ['CI_PROJECT_ID']}/environments", params={"search": "v1"}, timeout=30)
