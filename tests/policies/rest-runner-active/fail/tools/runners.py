import os

import gitlab
import requests

API = os.environ["CI_API_V4_URL"]


def pause(runner_id):
    # expect: rest-runner-active col=55
    requests.put(f"{API}/runners/{runner_id}", data={"active": False})


def inactive():
    gl = gitlab.Gitlab(os.environ["CI_SERVER_URL"], private_token=os.environ["TOKEN"])
    for runner in gl.runners.list(get_all=True):
        # expect: rest-runner-active col=23
        if not runner.active:
            print(runner.id)
    runner = gl.runners.get(5)
    # expect: rest-runner-active col=12
    runner.active = True
    runner.save()
