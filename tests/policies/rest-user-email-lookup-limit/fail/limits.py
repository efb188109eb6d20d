import os

import requests

API = os.environ["GITLAB_URL"] + "/api/v4"
requests.put(
    f"{API}/application/settings",
    headers={"PRIVATE-TOKEN": os.environ["TOKEN"]},
    # expect: rest-user-email-lookup-limit col=12
    data={"user_email_lookup_limit": 30},
    timeout=30,
)
