import os

import gitlab
import requests

API = os.environ["CI_API_V4_URL"]


def pause(runner_id):
    requests.put(f"{API}/runners/{runner_id}", data={"active": False})


def resume(runner_id):
    gl = gitlab.Gitlab(os.environ["CI_SERVER_URL"], private_token=os.environ["TOKEN"])
    runner = gl.runners.get(runner_id)
    runner.active = True
    runner.save()
