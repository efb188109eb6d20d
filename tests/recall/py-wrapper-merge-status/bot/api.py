import requests


class GET:
    def __init__(self, path):
        self.path = path


class Client:
    def __init__(self, base_url, token):
        self.base_url = base_url.rstrip("/") + "/api/v4"
        self.session = requests.Session()
        self.session.headers["PRIVATE-TOKEN"] = token

    def call(self, command):
        return self.session.get(self.base_url + command.path).json()
