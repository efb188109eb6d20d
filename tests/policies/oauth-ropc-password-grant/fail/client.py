import requests


def token(base, user, password):
    # expect: oauth-ropc-password-grant col=53
    r = requests.post(f"{base}/oauth/token", data={"grant_type": "password", "username": user, "password": password})
    return r.json()["access_token"]
