"""API extraction: jq reads, REST paths and endpoint patterns, shell clients, Python, JavaScript."""

from __future__ import annotations

import pytest

from scanner.readers.api import javascript as jssource
from scanner.readers.api.model import GraphqlText, RestCall
from scanner.readers.api.paths import api_url, compile_endpoint
from scanner.readers.api.python import extract as pysource
from scanner.readers.api.shell.jq import field_reads


@pytest.mark.parametrize(
    ("filt", "reads"),
    [
        (".version", [("version", ())]),
        (".[].version", [("version", ())]),
        (".[0].ip_address", [("ip_address", ())]),
        ("map(.version)", [("version", ())]),
        ('.[] | select(.status == "paused") | .id', [("status", ("paused",)), ("id", ())]),
        ('"active" != .status', [("status", ("active",))]),
        ("{id, version}", [("id", ()), ("version", ())]),
        ('"\\(.id) \\(.version)"', [("id", ()), ("version", ())]),
        ('has("active")', [("active", ())]),
        ('.["version"]', [("version", ())]),
        (".merged_by.username", [("merged_by", ())]),
        # not reads of the input objects' own fields
        (".projects[] | .name", [("projects", ())]),
        (".projects | map(.version)", [("projects", ())]),
        ("$runner.version", []),
        ("..|.version?", []),
        ("length", []),
        ("# .version\n.id", [("id", ())]),
    ],
)
def test_jq_reads(filt: str, reads: list[tuple[str, tuple[str, ...]]]) -> None:
    assert [(r.field, r.compared) for r in field_reads(filt)] == reads


def test_jq_offsets_point_at_the_field_name() -> None:
    filt = '.[] | "\\(.id) \\(.version)"'
    assert [filt[r.offset : r.offset + len(r.field)] for r in field_reads(filt)] == ["id", "version"]


@pytest.mark.parametrize(
    ("url", "bases", "path", "query"),
    [
        ("https://gitlab.example.com/api/v4/runners/7?active=true", (), "/runners/7", "active=true"),
        ("$CI_API_V4_URL/projects/$CI_PROJECT_ID/runners", (), "/projects/$CI_PROJECT_ID/runners", ""),
        ("${CI_API_V4_URL}/runners", (), "/runners", ""),
        ("${GITLAB_API}/runners/all", ("GITLAB_API",), "/runners/all", ""),
        ("$CI_SERVER_URL/api/v4/geo_nodes)", (), "/geo_nodes", ""),
        # the registry's own tag delete route is the one registry URL read as an API call
        ("https://$CI_REGISTRY/v2/$CI_PROJECT_PATH/tags/reference/$TAG", (), "/v2/$CI_PROJECT_PATH/tags/reference/$TAG",
         ""),
    ],
)
def test_api_url(url: str, bases: tuple[str, ...], path: str, query: str) -> None:
    parts = api_url(url, bases)
    assert parts is not None
    assert (parts.path, parts.query) == (path, query)
    assert url[parts.path_at :].startswith(path)


@pytest.mark.parametrize(
    "url", ["https://api.github.com/runners/1", "$GITLAB_API/runners", "https://x/api/v40/runners", "/api/v4x"]
)
def test_not_api_urls(url: str) -> None:
    assert api_url(url) is None


def test_endpoint_patterns() -> None:
    one = compile_endpoint("GET|PUT /runners/:id")
    assert one.matches("GET", "/runners/$RUNNER_ID") and one.matches("PUT", "/runners/7/")
    assert not one.matches("POST", "/runners/7") and not one.matches("GET", "/runners/7/jobs")
    tree = compile_endpoint("* /geo_nodes/**")
    assert tree.matches("DELETE", "/geo_nodes") and tree.matches("GET", "/geo_nodes/1/status")
    assert not tree.matches("GET", "/geo_sites")
    for bad in ("GET runners", "FETCH /runners"):
        with pytest.raises(ValueError):
            compile_endpoint(bad)


def test_a_double_star_between_segments_is_one_segment_or_more() -> None:
    tag = compile_endpoint("DELETE /v2/**/tags/reference/:tag")
    assert tag.matches("DELETE", "/v2/acme/app/tags/reference/v1.0")
    assert tag.matches("DELETE", "/v2/$CI_PROJECT_PATH/tags/reference/$TAG")
    assert not tag.matches("DELETE", "/v2/tags/reference/v1.0")
    assert not tag.matches("DELETE", "/v2/acme/app/manifests/v1.0")


def _rest(uses: list[RestCall | GraphqlText]) -> list[tuple[str, str, list[str], list[str]]]:
    return [(u.method, u.path, [p.name for p in u.params], [r.field for r in u.reads])
            for u in uses if isinstance(u, RestCall)]


def test_python_requests_and_reads_follow_values() -> None:
    text = (
        "import os\nimport requests\n"
        'API = os.environ["CI_API_V4_URL"]\n'
        "def f():\n"
        '    r = requests.get(f"{API}/runners", params={"status": "paused"})\n'
        "    for runner in r.json():\n"
        '        print(runner["version"], runner.get("ip_address"))\n'
        '    other = requests.get("https://example.com/runners").json()\n'
        '    print(other["version"])\n'
    )
    assert _rest(pysource.extract(text)) == [("GET", "/runners", ["status"], ["version", "ip_address"])]


def test_python_gitlab_objects_map_to_endpoints() -> None:
    text = (
        "import gitlab\n"
        'gl = gitlab.Gitlab("https://gitlab.example.com", private_token="x")\n'
        "runner = gl.runners.get(5)\n"
        "runner.active = False\n"
        "print(runner.version)\n"
        "mr = gl.projects.get(1).mergerequests.get(2)\n"
        "mr.changes()\n"
    )
    assert _rest(pysource.extract(text)) == [  # ids written in the call are kept; python-gitlab's own are :id
        ("GET", "/runners/5", [], ["version"]),
        ("PUT", "/runners/5", ["active"], []),
        ("GET", "/projects/1", [], []),
        ("GET", "/projects/:id/merge_requests/2", [], []),
        ("GET", "/projects/:id/merge_requests/2/changes", [], []),
    ]


def test_python_docstrings_and_unrelated_code_are_not_calls() -> None:
    text = (
        '"""requests.put(f"{API}/runners/1", data={"active": False}) and query { runner { version } }"""\n'
        "import gitlab\n"
        "data = {'active': False}\n"
        "print(data['active'])\n"
    )
    assert pysource.extract(text) == []


def test_python_graphql_strings_keep_their_positions() -> None:
    text = 'Q = """\nquery {\n  runner { active }\n}\n"""\n'
    (gql,) = pysource.extract(text + "# graphql\n")
    assert isinstance(gql, GraphqlText)
    offset = gql.text.index("active")
    assert gql.span(offset, 6) == (3, 12, 3, 18)


def test_js_fetch_axios_and_comments() -> None:
    text = (
        "// fetch(`${API}/runners/1`, {method: 'PUT', body: JSON.stringify({active: false})})\n"
        "const API = `${process.env.CI_SERVER_URL}/api/v4`;\n"
        "await fetch(`${API}/runners/${id}`, {method: 'PUT', body: JSON.stringify({ active: false })});\n"
        "await axios.post(API + '/runners/reset_registration_token');\n"
        "await fetch('https://example.com/runners/1', {method: 'PUT', body: JSON.stringify({active: false})});\n"
    )
    assert _rest(jssource.extract(text)) == [
        ("PUT", "/runners/{}", ["active"], []),
        ("POST", "/runners/reset_registration_token", [], []),
    ]


def test_ruby_that_ends_mid_statement_is_read_without_error() -> None:
    from scanner.readers.api.ruby import extract

    assert extract("client = Gitlab.") == []
    assert extract('client = Gitlab.client\nclient.runner("1"')[0].path == "/runners/{}"


@pytest.mark.parametrize(
    "url",
    ["https://registry.example.com/v2/_catalog", "https://registry.example.com/v2/acme/app/manifests/v1",
     "https://registry.example.com/v2/acme/app/tags/list", "https://example.com/v2/tags/reference/x"],
)
def test_other_registry_urls_are_not_api_calls(url: str) -> None:
    assert api_url(url) is None
