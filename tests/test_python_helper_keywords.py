"""A request helper that takes its query, form or JSON as keywords (`def get(self, path, **params):
return self.s.get(url, params=params)`) sends each keyword its caller writes, reported where the
caller wrote it; keywords that stop in the helper, or reach the client as its own options, are not
request fields."""

from __future__ import annotations

import keyword
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from scanner.readers.api.model import RestCall
from scanner.readers.api.python import extract as pysource
from scanner.rules.policy import Policy

from conftest import run_scan, where

SCRIPT = '''import os

import requests


class Api:
    def __init__(self, url):
        self.url = url.rstrip("/") + "/api/v4"
        self.s = requests.Session()

    def get(self, path, **params):
        return self.s.get(f"{self.url}/{path}", params=params, timeout=30)

    def put(self, path, **fields):
        return self.s.put(f"{self.url}/{path}", data=fields)

    def find(self, path, **query):
        return self.get(path, **query)  # passed on to a helper that sends them


api = Api(os.environ["GITLAB_URL"])
api.get("users", page=2)
api.put("projects/7", operations_access_level="disabled")
api.find("runners", scope="active")
'''

QUIET = '''import os

import requests

API = os.environ["GITLAB_URL"] + "/api/v4"


def get(path, **options):
    return requests.get(f"{API}/{path}", **options)  # keywords are requests' own options


def note(path, **extra):
    print(extra)
    return requests.get(f"{API}/{path}")  # they stop here


get("users", timeout=5)
note("users", page=2)
note("runners", scope="active")
'''


def test_keywords_sent_by_a_helper_are_fields_where_written(tmp_path: Path, policies: list[Policy]) -> None:
    (tmp_path / "admin.py").write_text(SCRIPT)
    report = run_scan([tmp_path], policies)
    assert report.errors == []
    assert where(report) == {
        ("rest-users-offset-pagination", "admin.py", 22, 18),
        ("rest-operations-access-level", "admin.py", 23, 23),
        ("rest-runner-status-paused-active", "admin.py", 24, 21),
    }


def test_keywords_that_are_not_sent_are_not_fields(tmp_path: Path, policies: list[Policy]) -> None:
    (tmp_path / "quiet.py").write_text(QUIET)
    report = run_scan([tmp_path], policies)
    assert report.errors == []
    assert where(report) == set()


_NAME = st.from_regex(r"[a-z][a-z_]{0,12}", fullmatch=True).filter(lambda n: not keyword.iskeyword(n))


@settings(max_examples=60, deadline=None)
@given(names=st.lists(_NAME, min_size=1, max_size=4, unique=True), how=st.sampled_from(["params", "data", "json"]),
       forward=st.booleans())
def test_every_keyword_is_a_field_at_its_place(names: list[str], how: str, forward: bool) -> None:
    """Property: whatever keywords a caller gives (directly, or through a helper that passes its own
    `**kw` on), the request carries exactly those fields, each at the column the caller wrote it."""
    call = ", ".join(f"{n}={i}" for i, n in enumerate(names))
    text = (
        "import requests\n"
        'API = "https://gitlab.example.com/api/v4"\n'
        f"def send(path, **kw):\n    return requests.post(API + '/' + path, {how}=kw)\n"
        "def outer(path, **kw):\n    return send(path, **kw)\n"
        f"{'outer' if forward else 'send'}(\"projects\", {call})\n"
    )
    line = text.count("\n")
    start = text.splitlines()[-1].index("(") + len('"projects", ') + 2
    want = []
    col = start
    for i, n in enumerate(names):
        want.append((n, (line, col, line, col + len(n)), i))
        col += len(f"{n}={i}, ")
    # the helpers are also read once in place, with a path they cannot know (`/{}`)
    calls = [c for c in pysource.extract(text) if isinstance(c, RestCall) and c.path != "/{}"]
    assert [(c.method, c.path) for c in calls] == [("POST", "/projects")]
    assert [(p.name, p.span, p.value) for p in calls[0].params] == want
