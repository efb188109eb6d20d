"""Runners: requests.put(f"{API}/runners/1", data={"active": False}) is the old way."""
import os

import requests

API = os.environ["CI_API_V4_URL"]


def pause(runner_id):
    # ok: rest-runner-active
    requests.put(f"{API}/runners/{runner_id}", data={"paused": True})
    # ok: rest-runner-active
    requests.put(f"{API}/projects/{runner_id}", data={"active": False})
    settings = {"active": False}
    # ok: rest-runner-active
    print(settings["active"])
