import os

import requests

API = os.environ["CI_API_V4_URL"]
requests.get(
    f"{API}/projects/{os.environ['CI_PROJECT_ID']}/deployments",
    # expect: rest-deployments-updated-filter col=14
    params={"updated_after": "2024-01-01T00:00:00Z", "environment": "production"},
    timeout=30,
)
