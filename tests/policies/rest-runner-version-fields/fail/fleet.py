import os

import requests

API = os.environ["CI_API_V4_URL"]
for runner in requests.get(API + "/runners/all").json():
    # expect: rest-runner-version-fields col=20
    if runner.get("revision") != os.environ["WANTED_REVISION"]:
        print(runner["id"])
