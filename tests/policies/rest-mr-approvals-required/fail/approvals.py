import os

import requests

API = os.environ["CI_API_V4_URL"]
url = f"{API}/projects/{os.environ['CI_PROJECT_ID']}/merge_requests/{os.environ['CI_MERGE_REQUEST_IID']}/approvals"
# expect: rest-mr-approvals-required col=27
requests.post(url, json={"approvals_required": 2}, timeout=30)
