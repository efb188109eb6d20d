"""The environment variables users name for GitLab's REST base (`$GITLAB_API`, `$GITLAB_API_URL`,
`${GITLAB_API_V4_URL}`) are read as the API base in shell scripts and CI jobs, as the Python reader
reads them — one list, `scanner.readers.api.paths.API_BASE_ENV` — and look-alikes are not."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_shell_flow import _scan

from scanner.core.document import Document
from scanner.core.tree import Tree
from scanner.readers.api.paths import API_BASE_ENV
from scanner.readers.api.python import source
from scanner.rules import facets
from scanner.rules.policy import Policy


def _text(text: str) -> Document:
    return Document("x.sh", Path("x.sh"), "shell", text, Tree([], []))


def test_one_list_of_names_for_every_reader() -> None:
    assert source.API_ENV is API_BASE_ENV
    for name in API_BASE_ENV:
        assert source.PREFILTER.search(f"x = os.environ['{name}']")
        assert facets.api_possible(_text(f'curl "${name}/users"'))
    assert not facets.api_possible(_text('curl "$GITLAB_API_TOKEN_FILE/users"'))


def test_shell_script_takes_the_named_bases(tmp_path: Path, policies: list[Policy]) -> None:
    script = (
        "#!/bin/sh\n"
        'curl --header "PRIVATE-TOKEN: $T" "$GITLAB_API/users?page=2"\n'
        'curl -X PUT "${GITLAB_API_V4_URL}/projects/$ID/services/slack" -d "webhook=$H"\n'
        'curl -s "$GITLAB_API_URL/runners?scope=active"\n'
        'api() { curl -sf -H "PRIVATE-TOKEN: $T" "$GITLAB_API_URL/$1"; }\n'
        "api geo_nodes\n"
    )
    assert _scan(tmp_path, policies, {"admin.sh": script}) == {
        ("rest-users-offset-pagination", "admin.sh", 2, 54),  # `page`
        ("rest-deprecated-integrations", "admin.sh", 3, 34),  # the path after the base
        ("rest-runner-status-paused-active", "admin.sh", 4, 34),  # `scope`
        ("rest-geo-nodes", "admin.sh", 6, 5),  # the helper's argument that completes the path
    }


def test_ci_job_takes_the_named_bases(tmp_path: Path, policies: list[Policy]) -> None:
    ci = (
        "notify:\n"
        "  script:\n"
        '    - curl -X PUT --data "webhook=$H" "$GITLAB_API_URL/projects/$CI_PROJECT_ID/services/slack"\n'
    )
    assert _scan(tmp_path, policies, {".gitlab-ci.yml": ci}) == {
        ("rest-deprecated-integrations", ".gitlab-ci.yml", 3, 55),
    }


def test_look_alikes_are_not_the_api(tmp_path: Path, policies: list[Policy]) -> None:
    script = (
        "#!/bin/sh\n"
        'curl "$GITLAB_API_HOST/users?page=2"\n'  # another name: not the base
        'curl "$GITLAB_API/api/v4/version"\n'  # the variable holds the host: the path follows /api/v4
        "GITLAB_API=https://example.com/other\n"  # set in the script to something else
        'curl "$GITLAB_API/users?page=2"\n'
        'echo "$GITLAB_API_URL/users?page=2"\n'  # not a request
        'curl "$MY_GITLAB_API/users?page=2"\n'
    )
    assert _scan(tmp_path, policies, {"other.sh": script}) == set()


_SEGMENT = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_0123456789", min_size=1, max_size=8)
_PATHS = st.one_of(
    st.sampled_from(["users?page=2", "projects/1/services/slack", "geo_nodes", "runners?scope=paused",
                     "projects/2/merge_requests/3/changes", "version"]),
    st.lists(_SEGMENT, min_size=1, max_size=4).map("/".join),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(API_BASE_ENV), braces=st.booleans(), path=_PATHS)
def test_a_named_base_reads_as_ci_api_v4_url(
    tmp_path_factory: object, policies: list[Policy], name: str, braces: bool, path: str
) -> None:
    """Property: `curl "$NAME/<path>"` gives exactly what `curl "$CI_API_V4_URL/<path>"` gives, at the
    same place (the names have the same length once braces are counted, so columns are shifted)."""
    import tempfile

    ref = "${CI_API_V4_URL}" if braces else "$CI_API_V4_URL"
    var = "${" + name + "}" if braces else "$" + name
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        want = _scan(Path(a), policies, {"s.sh": f'#!/bin/sh\ncurl "{ref}/{path}"\n'})
        got = _scan(Path(b), policies, {"s.sh": f'#!/bin/sh\ncurl "{var}/{path}"\n'})
    shift = len(var) - len(ref)
    assert got == {(p, f, line, col + shift) for p, f, line, col in want}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.from_regex(re.compile(r"[A-Z][A-Z0-9_]{0,14}", re.ASCII), fullmatch=True))
def test_other_names_are_not_a_base(policies: list[Policy], name: str) -> None:
    """Property: a variable not in the list, never set in the script, is not GitLab's API."""
    import tempfile

    if name in API_BASE_ENV or name == "CI_API_V4_URL":
        return
    with tempfile.TemporaryDirectory() as d:
        assert _scan(Path(d), policies, {"s.sh": f'#!/bin/sh\ncurl "${name}/users?page=2"\n'}) == set()


JS = """const axios = require("axios");
const API = process.env.GITLAB_API_URL;
const HOST = process.env.GITLAB_API;
async function main() {
  await axios.get(`${API}/users?page=2`);
  await fetch(`${process.env.GITLAB_API_V4_URL}/projects/1/services/slack`, { method: "PUT" });
  await fetch(`${HOST}/api/v4/geo_nodes`);
  await fetch(`${process.env.GITLAB_API_HOST}/users?page=2`);
}
"""

RUBY = """require "net/http"
base = ENV["GITLAB_API_URL"]
Net::HTTP.get(URI("#{base}/users?page=2"))
uri = URI("#{ENV.fetch('GITLAB_API_V4_URL')}/projects/1/services/slack")
req = Net::HTTP::Put.new(uri)
Net::HTTP.get(URI("#{ENV['GITLAB_API_TOKEN_URL']}/users?page=2"))
"""


def test_javascript_and_ruby_take_the_named_bases(tmp_path: Path, policies: list[Policy]) -> None:
    assert _scan(tmp_path, policies, {"bot.js": JS, "admin.rb": RUBY}) == {
        ("rest-users-offset-pagination", "bot.js", 5, 33),
        ("rest-deprecated-integrations", "bot.js", 6, 48),
        ("rest-geo-nodes", "bot.js", 7, 30),  # the variable holds the host: the path follows /api/v4
        ("rest-users-offset-pagination", "admin.rb", 3, 34),
        ("rest-deprecated-integrations", "admin.rb", 4, 45),
    }


_LANGS = {
    # (how the reference base is written, how a named base is written, file name)
    "js": ("${process.env.CI_API_V4_URL}", "${process.env.%s}", "a.js", "fetch(`%s/%s`);\n"),
    "ruby": ("#{ENV['CI_API_V4_URL']}", "#{ENV['%s']}", "a.rb", 'Net::HTTP.get(URI("%s/%s"))\n'),
    "python": ("{os.environ['CI_API_V4_URL']}", "{os.environ['%s']}", "a.py",
               'import os, requests\nrequests.get(f"%s/%s")\n'),
}


@settings(max_examples=30, deadline=None)
@given(lang=st.sampled_from(sorted(_LANGS)), name=st.sampled_from(API_BASE_ENV), path=_PATHS)
def test_every_reader_reads_a_named_base_as_ci_api_v4_url(
    policies: list[Policy], lang: str, name: str, path: str
) -> None:
    """Property: in JavaScript, Ruby and Python alike, a URL built on one of the named variables gives
    exactly what the same URL built on `CI_API_V4_URL` gives, at the same places."""
    import tempfile

    ref, named, file, line = _LANGS[lang]
    var = named % name
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        want = _scan(Path(a), policies, {file: line % (ref, path)})
        got = _scan(Path(b), policies, {file: line % (var, path)})
    shift = len(var) - len(ref)
    assert got == {(p, f, ln, col + shift) for p, f, ln, col in want}
