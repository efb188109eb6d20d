"""Python as users write it: helpers around HTTP clients, base URLs on modules and classes, URLs
built every way, python-gitlab objects passed around — each found at its exact place, near-misses
not at all; and the reader's own properties (no text makes it fail, every call inside the file,
bounded work on crafted input)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scanner.core.tree import ParseError
from scanner.readers.api.model import UNKNOWN, RestCall
from scanner.readers.api.python.extract import extract
from scanner.rules.policy import Policy

from conftest import examples, run_scan, where

Found = set[tuple[str, str, int, int]]
INTEGRATIONS = "rest-deprecated-integrations"


def _scan(tmp_path: Path, policies: list[Policy], files: dict[str, str]) -> Found:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    report = run_scan([tmp_path], policies)
    assert report.errors == []
    return where(report)


HELPERS = '''import os

import requests

BASE = os.environ["GITLAB_URL"] + "/api/v4"
HEADERS = {"PRIVATE-TOKEN": os.environ["TOKEN"]}


def api(method, path, **kw):
    return requests.request(method, f"{BASE}/{path}", headers=HEADERS, timeout=30, **kw)


def get(path, **kw):
    return api("GET", path, **kw)


def main():
    api("PUT", "projects/1/integrations/slack", data={"webhook": "x"})
    for node in get("geo_nodes").json():
        print(node["id"])


if __name__ == "__main__":
    main()
'''

CLASSES = '''import os

import httpx
import requests
from requests_toolbelt.sessions import BaseUrlSession


class GitLab:
    API = "https://gitlab.example.com/api/v4"

    def __init__(self, token):
        self.session = requests.Session()
        self.session.headers["PRIVATE-TOKEN"] = token

    def put(self, path, **data):
        return self.session.put(f"{self.API}/{path}", data=data)

    def licenses(self, project):
        return self.put("projects/%s/managed_licenses" % project, name="MIT")


class Admin(requests.Session):
    def __init__(self, url):
        super().__init__()
        self.base_url = url.rstrip("/") + "/api/v4/"


client = GitLab("t")
client.put("projects/{}/services/slack".format(7), webhook="x")
s = BaseUrlSession(base_url="https://gitlab.example.com/api/v4/")
s.put("projects/3/integrations/slack")
c = httpx.Client(base_url=os.environ["CI_API_V4_URL"])
c.delete("/projects/4/services/slack")
Admin(os.environ["CI_SERVER_URL"]).post("geo_nodes/1/repair")
'''

STDLIB = '''import http.client
import os
import urllib.request
from urllib.parse import urljoin

import requests

API = os.environ["CI_API_V4_URL"] + "/"
req = urllib.request.Request(urljoin(API, "projects/5/integrations/slack"), data=b"x", method="PUT")
urllib.request.urlopen(req)
conn = http.client.HTTPSConnection("gitlab.example.com")
conn.request("DELETE", "/api/v4/projects/6/services/slack")
requests.get("/".join([API.rstrip("/"), "geo_nodes", "3"]))
requests.post("{}/projects/{}/managed_licenses".format(API.rstrip("/"), 8), data={"name": "MIT"})
'''

PYTHON_GITLAB = '''import gitlab


def register(gl, token):
    return gl.runners.create({"token": token, "description": "x"})


class Sync:
    def __init__(self):
        self.gl = gitlab.Gitlab.from_config()

    def slack(self, project_id):
        project = self.gl.projects.get(project_id)
        project.integrations.get("slack").save()
        project.services.get("slack").delete()


def cleanup(project):
    integration = project.services.get("zentao")
    integration.active = False
    integration.save()


def fleet(sites):
    clients = {}
    for site in sites:
        clients[site] = gitlab.Gitlab(site, private_token="x")
    for url, client in clients.items():
        client.runners.create({"token": url})
'''


def test_helpers_around_http_clients(tmp_path: Path, policies: list[Policy]) -> None:
    assert _scan(tmp_path, policies, {"admin.py": HELPERS}) == {
        (INTEGRATIONS, "admin.py", 18, 17),  # at the caller's argument, not in the helper
        ("rest-geo-nodes", "admin.py", 19, 22),
    }


def test_base_urls_on_classes_sessions_and_clients(tmp_path: Path, policies: list[Policy]) -> None:
    assert _scan(tmp_path, policies, {"client.py": CLASSES}) == {
        ("rest-managed-licenses", "client.py", 19, 26),
        (INTEGRATIONS, "client.py", 29, 13),
        (INTEGRATIONS, "client.py", 31, 8),
        (INTEGRATIONS, "client.py", 33, 11),
        ("rest-geo-nodes", "client.py", 34, 42),
    }


def test_the_standard_library_and_urls_built_every_way(tmp_path: Path, policies: list[Policy]) -> None:
    assert _scan(tmp_path, policies, {"stdlib.py": STDLIB}) == {
        (INTEGRATIONS, "stdlib.py", 9, 44),
        (INTEGRATIONS, "stdlib.py", 12, 32),
        ("rest-geo-nodes", "stdlib.py", 13, 15),
        ("rest-managed-licenses", "stdlib.py", 14, 18),
    }


def test_python_gitlab_objects_through_parameters_attributes_and_managers(
        tmp_path: Path, policies: list[Policy]) -> None:
    assert _scan(tmp_path, policies, {"sync.py": PYTHON_GITLAB}) == {
        ("rest-runner-registration-endpoint", "sync.py", 5, 23),  # `gl` is a parameter
        (INTEGRATIONS, "sync.py", 14, 30),  # get
        (INTEGRATIONS, "sync.py", 14, 43),  # save
        (INTEGRATIONS, "sync.py", 15, 26),  # `.services` is the same manager in python-gitlab
        (INTEGRATIONS, "sync.py", 15, 39),  # delete
        ("rest-zentao-integration", "sync.py", 19, 36),  # `project` is a parameter
        ("rest-zentao-integration", "sync.py", 20, 17),  # sends `active`
        ("rest-zentao-integration", "sync.py", 21, 17),
        ("rest-runner-registration-endpoint", "sync.py", 29, 24),  # a client kept in a dict
    }


NEAR = '''import logging
import os
from urllib.parse import urljoin

import requests

BASE = "https://example.com/v1"
API = os.environ["CI_API_V4_URL"]
log = logging.getLogger(__name__)


def api(method, path):
    print(method, f"{API}/{path}")


def register(gl, token):
    return gl.runners.create({"token": token})


requests.get(f"{BASE}/projects/1/integrations/slack")
api("PUT", "projects/1/integrations/slack")
log.info(f"{API}/projects/1/integrations/slack")
link = urljoin(API + "/", "projects/1/integrations/slack")
project = load_config()
project.integrations.get("slack")
'''


def test_near_misses_are_not_calls(tmp_path: Path, policies: list[Policy]) -> None:
    assert _scan(tmp_path, policies, {"near.py": NEAR}) == set()  # no python-gitlab import: `gl` is anything


def test_a_name_only_says_python_gitlab_in_a_file_that_uses_it() -> None:
    text = "import gitlab\n\ndef register(gl, project):\n    gl.runners.create({'token': 'x'})\n"
    assert [(u.method, u.path) for u in extract(text) if isinstance(u, RestCall)] == [("POST", "/runners")]
    assert extract(text.replace("import gitlab", "import requests  # /api/v4")) == []


PAYLOADS = '''import os

import requests

API = os.environ["GITLAB_API_URL"]
H = {"PRIVATE-TOKEN": os.environ["ADMIN_TOKEN"]}
defaults = {"skip_confirmation": True}


def create(username):
    payload = {"username": username, "email": f"{username}@example.com"}
    payload["private_profile"] = None
    return requests.post(f"{API}/users", headers=H, json=payload, timeout=30)


def update(user_id):
    body = dict(name="Bot", private_profile=None)
    requests.put(f"{API}/users/{user_id}", headers=H, data=body)


def export():
    query = {"per_page": 100}
    query["page"] = 1
    while True:
        users = requests.get(API + "/users", headers=H, params=query).json()
        if not users:
            break
        query["page"] += 1


defaults["private_profile"] = None
requests.post(f"{os.environ['GITLAB_API']}/users", json=defaults)
user = {**defaults, "username": "bot"}
requests.post(f"{API}/users", json=user)
extra = {"username": "bot"}
extra.update({"private_profile": None})
requests.post(f"{API}/users", json=extra)
more = dict(username="bot")
more.update(private_profile=None)
requests.put(f"{os.environ['GITLAB_API_V4_URL']}/users/1", json=more)
'''


def test_a_dict_built_before_the_call_gives_its_fields(tmp_path: Path, policies: list[Policy]) -> None:
    """A display bound to a name, keys set on it afterwards, `dict(k=v)`, in `json=`, `data=` and
    `params=`, at function or module level; each field where its key is written."""
    assert _scan(tmp_path, policies, {"users.py": PAYLOADS}) == {
        ("rest-user-private-profile-null", "users.py", 12, 14),  # set after the display
        ("rest-user-private-profile-null", "users.py", 17, 29),  # a `dict(…)` keyword
        ("rest-users-offset-pagination", "users.py", 23, 12),  # `params=` bound to a name
        ("rest-user-private-profile-null", "users.py", 31, 11),  # module level, sent under `GITLAB_API`
        ("rest-user-private-profile-null", "users.py", 36, 16),  # `.update({...})`
        ("rest-user-private-profile-null", "users.py", 39, 13),  # `.update(k=v)`
    }


ENCODED = '''import json
import os
import urllib.request
from urllib.parse import urlencode

API = os.environ["CI_API_V4_URL"]
query = urlencode({"per_page": 100, "page": 2})
users = json.load(urllib.request.urlopen(f"{API}/users?{query}"))
urllib.request.urlopen(API + "/users?" + urlencode({"pagination": "keyset", "per_page": 100}))
urllib.request.urlopen(API + "/projects?" + urlencode({"page": 2}))
urllib.request.urlopen("https://example.com/users?" + urlencode({"page": 2}))
'''


def test_a_query_built_with_urlencode_is_read(tmp_path: Path, policies: list[Policy]) -> None:
    """`urlencode({...})` in the URL: each field at its key; keyset pages, other endpoints and other
    hosts are not offset pages of GitLab's `/users`."""
    assert _scan(tmp_path, policies, {"users.py": ENCODED}) == {("rest-users-offset-pagination", "users.py", 7, 38)}


FORWARDED = '''import os

import requests

API = os.environ["GITLAB_API_URL"]


def api(method, path, **kw):
    return requests.request(method, f"{API}/{path}", timeout=30, **kw)


def get(path, **options):
    return api("GET", path, **options)


def quiet(path, **kw):
    print(kw)
    return requests.get(f"{API}/{path}", timeout=30)


get("users", params={"per_page": 100, "page": 2})
api("POST", "users", json={"username": "bot", "private_profile": None})
quiet("users", params={"page": 2})  # the keywords stop in the helper: not sent
'''


def test_keywords_a_helper_passes_on_reach_the_request(tmp_path: Path, policies: list[Policy]) -> None:
    """`**kw` given to a helper and passed on to requests, through helpers of helpers; a helper that
    keeps them sends nothing of them."""
    assert _scan(tmp_path, policies, {"helpers.py": FORWARDED}) == {
        ("rest-users-offset-pagination", "helpers.py", 21, 40),
        ("rest-user-private-profile-null", "helpers.py", 22, 48),
    }


def test_a_dict_spread_into_another_sends_its_fields_where_they_are_written() -> None:
    text = ("import requests\nbase = {'private_profile': None}\nbase['name'] = 'n'\n"
            "requests.post('https://gitlab.example.com/api/v4/users', json={**base, 'username': 'bot'})\n")
    [call] = [u for u in extract(text) if isinstance(u, RestCall)]
    assert [(p.name, p.span[:2], p.value) for p in call.params] == [
        ("username", (4, 73), "bot"), ("private_profile", (2, 10), None), ("name", (3, 7), "n")]


def test_an_api_variable_holding_the_web_root_is_read_with_its_path() -> None:
    """`GITLAB_API_URL` set to `https://gitlab.example.com` then `/api/v4/...` after it: the path starts after
    `/api/v4`, not after the variable."""
    text = "import os, requests\nrequests.get(f\"{os.environ['GITLAB_API_URL']}/api/v4/users?page=2\")\n"
    [call] = [u for u in extract(text) if isinstance(u, RestCall)]
    assert (call.method, call.path, [(p.name, p.value) for p in call.params]) == ("GET", "/users", [("page", "2")])


NEAR_PAYLOADS = '''import os

import requests

API = os.environ["GITLAB_API_URL"]
WEB = os.environ["GITLAB_URL"]
payload = {"username": "bot"}
requests.post(f"{API}/users", json=payload)
payload["private_profile"] = None  # set after the request: not sent by it
payload = {"username": "bot", "private_profile": False}
requests.post(f"{API}/users", json=payload)
other = {"private_profile": None}
requests.post(f"{API}/users", json={"username": "bot"})
requests.post(f"{WEB}/users", json=other)  # the web root, not the API
requests.post(f"{os.environ['GITLAB_API_TOKEN']}/users", json=other)
requests.post(f"{os.environ['GITHUB_API_URL']}/users", json=other)
query = {"per_page": 100}
requests.get(f"{API}/users", params=query)
query["page"] = 2
requests.get(f"{API}/projects", params=query)  # offset pages are deprecated on /users only
requests.get(f"{API}/users", params={"pagination": "keyset", "per_page": 100})
'''


def test_near_misses_of_dicts_built_before_the_call(tmp_path: Path, policies: list[Policy]) -> None:
    assert _scan(tmp_path, policies, {"near_users.py": NEAR_PAYLOADS}) == set()


_KEYS = st.sampled_from(["username", "private_profile", "page", "per_page", "name", "a_b"])
_VALUES = st.sampled_from(["None", "True", "1", "'x'", "name", "[]"])
_SETS = {"item": "d['{k}'] = {v}", "update": "d.update({{'{k}': {v}}})", "keyword": "d.update({k}={v})"}
_SET = st.tuples(st.sampled_from(sorted(_SETS)), _KEYS, _VALUES)


@settings(derandomize=True, deadline=None, max_examples=examples(200))
@given(shown=st.lists(st.tuples(_KEYS, _VALUES), max_size=4), before=st.lists(_SET, max_size=5),
       after=st.lists(_SET, max_size=3), indent=st.sampled_from(["", "    "]))
def test_the_fields_sent_are_the_keys_set_before_the_call(shown: list[tuple[str, str]],
                                                          before: list[tuple[str, str, str]],
                                                          after: list[tuple[str, str, str]], indent: str) -> None:
    """Whatever keys a dict is built with and given before and after the call (`d[k] = v`,
    `d.update({k: v})`, `d.update(k=v)`), the call sends exactly the ones written before it, in order,
    each at its key's first character with its value."""
    display = ", ".join(f"'{k}': {v}" for k, v in shown)
    lines = ["import requests", "def f(name):" if indent else "", f"{indent}d = {{{display}}}"]
    lines += [indent + _SETS[form].format(k=k, v=v) for form, k, v in before]
    lines.append(f"{indent}requests.post('https://gitlab.example.com/api/v4/users', json=d)")
    lines += [indent + _SETS[form].format(k=k, v=v) for form, k, v in after]
    text = "\n".join(lines) + "\n"
    calls = [u for u in extract(text) if isinstance(u, RestCall)]
    assert len(calls) == 1
    written = {"None": None, "True": True, "1": 1, "'x'": "x"}
    expected = [(k, written.get(v, UNKNOWN)) for k, v in [*shown, *((k, v) for _, k, v in before)]]
    assert [(p.name, p.value) for p in calls[0].params] == expected
    source = text.split("\n")
    for p in calls[0].params:
        line, col, end_line, end = p.span
        text_at = source[line - 1]
        assert line == end_line and text_at[col - 1 : end - 1] == p.name
        assert text_at[col - 2] == "'" or text_at[end - 1] == "="  # a quoted key, or a keyword


# The reader's properties.

_PIECES = ["import requests\n", "import gitlab\n", "import os\n", "def f(a, b=1, *c, **d):\n", "    ", "return ",
           "class C(requests.Session):\n", "self.", "f(", ")", "(", "[", "]", "{", "}", ", ", ": ", "\n",
           '"/api/v4/projects/"', 'f"{BASE}/{p}"', "BASE = ", "BASE + ", "% (1, 2)", ".format(x)", "requests.put(",
           "gl.runners.create(", "gl = gitlab.Gitlab()\n", "for x in y:\n", "x = ", "'slack'", ".get(", ".save()",
           "**kw", "params=", "project.integrations", "lambda: ", "await ", "yield ", "\\", "#", "'", '"', "\t",
           "if x:\n", "else:\n", "from urllib.parse import urlencode\n", "urlencode(", "d.update(", "**d"]
TEXT = st.one_of(st.text(max_size=200), st.lists(st.sampled_from(_PIECES), max_size=60).map("".join))


def _inside(text: str, line: int, column: int) -> bool:
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return 1 <= line <= len(lines) and 1 <= column <= len(lines[line - 1]) + 1


@settings(derandomize=True, deadline=None, max_examples=examples(300),
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(text=TEXT)
def test_any_text_gives_calls_inside_it_or_a_parse_error(text: str) -> None:
    try:
        uses = extract("# /api/v4\n" + text)
    except ParseError:
        return
    for use in uses:
        if isinstance(use, RestCall):
            spans = [use.span, *(p.span for p in use.params), *(r.span for r in use.reads)]
            assert all(_inside("# /api/v4\n" + text, s[0], s[1]) for s in spans), use
        else:
            assert all(_inside("# /api/v4\n" + text, line, col) for line, col in use.positions), use


BUDGET = 5.0  # seconds of CPU time: bounds the work, does not measure speed (bench/ does)
_CHAIN = "import requests\nBASE = '/api/v4'\ndef f0(p):\n    return requests.get(BASE + p)\n" + "".join(
    f"def f{i}(p):\n    f{i - 1}(p); f{i - 1}(p); return f{i - 1}(p)\n" for i in range(1, 60))
FAMILIES = {
    "a finding line repeated": "import requests\n" + 'requests.put(f"{B}/api/v4/runners/1", data={"active": False})\n'
    * 6_000,
    "helpers calling helpers": _CHAIN + "f59('/runners')\n" * 200,
    "a helper called from everywhere": "import requests\nB = '/api/v4'\ndef api(p):\n" + "    x = 1\n" * 200
    + "    return requests.get(B + p)\n" + "api('/runners')\n" * 3_000,
    "a long line": "import requests\nx = [" + "'/api/v4/runners', " * 30_000 + "]\n",
    "non-ASCII on a long line": "import requests\nx = '" + "é" * 100_000 + "' + requests.get('/api/v4/x')\n",
    "a dict given many keys": "import requests\nd = {}\n" + "d['k'] = 1\nd.update(a=1, b={'c': 2})\n" * 10_000
    + "requests.post('/api/v4/users', json={**d, **d})\n" * 100,
    "a string concatenated many times": "import requests\nu = '/api/v4'\n" + "u = u + '/a'\n" * 5_000
    + "requests.get(u)\n",
    "methods calling methods": "import requests\nclass C:\n" + "".join(
        f"    def m{i}(self, p):\n        return self.m{i - 1}(p) or self.m{i - 1}(p)\n" for i in range(1, 80))
    + "    def m0(self, p):\n        return requests.get('/api/v4' + p)\n" + "C().m79('/x')\n" * 100,
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_crafted_python_is_read_in_bounded_work(family: str) -> None:
    start = time.process_time()
    extract(FAMILIES[family])
    assert time.process_time() - start < BUDGET
