import os

import requests

API = os.environ["CI_API_V4_URL"]
# expect: rest-reset-registration-token col=30
token = requests.post(API + "/runners/reset_registration_token").json()["token"]
