import os

import requests

API = os.environ["GITLAB_URL"] + "/api/v4"
url = f"{API}/projects/{os.environ['PROJECT_ID']}/merge_requests/{os.environ['MR_IID']}/status_check_responses"
# expect: rest-status-check-response-status col=53
requests.post(url, data={"sha": os.environ["SHA"], "external_status_check_id": 12}, timeout=30)
