"""API policies through the whole scan: which reads belong to which call, bad input, lazy imports."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from scanner.rules.catalog import PolicyLoadError, load_policies
from scanner.rules.policy import Policy

from conftest import run_scan, where


def _scan(tmp_path: Path, policies: list[Policy], files: dict[str, str]) -> set[tuple[str, str, int, int]]:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    report = run_scan([tmp_path], policies)
    assert report.errors == []
    return where(report)


def test_a_read_belongs_to_the_call_that_produced_the_data(tmp_path: Path, policies: list[Policy]) -> None:
    script = (
        "#!/bin/sh\n"
        'curl -s "$CI_API_V4_URL/runners/1" || jq .version runner.json\n'  # `||` is not a pipe
        'curl -s -o runners.json "$CI_API_V4_URL/runners/all"\n'
        "jq '.[].version' other.json\n"  # another file
        "jq '.[].version' < runners.json\n"  # the response
        'V=$(curl -s "$CI_API_V4_URL/runners/1" | jq .description)\n'
        'echo "$V" | jq .version\n'  # V holds jq's output, not the runner
        'curl -s "$CI_API_V4_URL/runners/1" | jq . | jq .version\n'  # the second jq reads the first one's output
    )
    found = _scan(tmp_path, policies, {"fleet.sh": script})
    assert found == {("rest-runner-version-fields", "fleet.sh", 5, 9)}


def test_words_in_comments_and_strings_are_not_calls(tmp_path: Path, policies: list[Policy]) -> None:
    ci = (
        "job:\n"
        "  script:\n"
        '    - echo "curl --form active=false $CI_API_V4_URL/runners/1"\n'
        "    # - curl -X POST $CI_API_V4_URL/runners/reset_registration_token\n"
        "    - 'printf \"%s\" \"POST /runners\"'\n"
    )
    assert _scan(tmp_path, policies, {".gitlab-ci.yml": ci}) == set()


def test_invalid_graphql_file_is_an_input_error(tmp_path: Path, policies: list[Policy]) -> None:
    (tmp_path / "broken.graphql").write_text("query {\n  runners { nodes { id }\n")
    report = run_scan([tmp_path], policies)
    assert [(e.path, e.line) for e in report.errors] == [("broken.graphql", 3)]
    assert report.errors[0].message.startswith("invalid GraphQL:")


def test_python_that_does_not_parse(tmp_path: Path, policies: list[Policy]) -> None:
    (tmp_path / "api.py").write_text('import requests\nrequests.get(f"{API}/api/v4/runners"\n')
    (tmp_path / "py2.py").write_text('print "no API here"\n')
    report = run_scan([tmp_path], policies)
    assert [(e.path, e.message.split(":")[0]) for e in report.errors] == [("api.py", "invalid Python")]


@pytest.mark.parametrize(
    ("match", "problem"),
    [
        ("{kind: rest-api, endpoints: ['GET runners']}", "write `METHOD /path`"),
        ("{kind: rest-api, endpoints: []}", "endpoints"),
        ("{kind: graphql, rules: [{fields: [a], types: [B]}]}", "rules.0.types"),
    ],
)
def test_bad_api_matchers_name_the_policy_line(tmp_path: Path, match: str, problem: str) -> None:
    policy = (
        "title: Test API policy\nsummary: s\nmessage: m\nrationale: r\nremediation: r\n"
        "removed_in: null\nbreaking: true\norigin: gitlab\n"
        "references: [{title: t, url: 'https://docs.gitlab.com/'}]\n"
        f"applies_to: [gitlab-ci]\nmatch: {match}\nexample: {{before: a, after: b}}\n"
    )
    (tmp_path / "t-api.yaml").write_text(policy)
    with pytest.raises(PolicyLoadError, match=rf"t-api.yaml:11: match: .*{problem}"):
        load_policies([tmp_path])


def test_scanning_api_calls_without_graphql_does_not_import_graphql(tmp_path: Path) -> None:
    (tmp_path / ".gitlab-ci.yml").write_text(
        'job:\n  script:\n    - curl -s "$CI_API_V4_URL/runners/1" | jq .version\n'
    )
    (tmp_path / "tool.py").write_text('import requests\nrequests.get("https://g.example/api/v4/geo_nodes")\n')
    code = (
        "import sys, scanner.cli as c; c.main(['scan', sys.argv[1]]);"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'graphql'))"
    )
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=False)
    assert out.stdout.splitlines()[-1] == "[]"


def test_graphql_variables_sent_with_the_query_are_arguments(tmp_path: Path, policies: list[Policy]) -> None:
    """`runnerUpdate(input: $input)` with `"variables": {"input": {"active": …}}`: the finding is at `$input`."""
    body = ('{"query": "mutation($input: RunnerUpdateInput!) { runnerUpdate(input: $input) { errors } }", '
            '"variables": {"input": {"id": "gid://gitlab/Ci::Runner/1", "active": false}}}')
    unrelated = '{"query": "mutation($input: RunnerUpdateInput!) { runnerUpdate(input: $input) { errors } }", ' \
                '"variables": {"input": {"id": "gid://gitlab/Ci::Runner/1", "paused": true}}}'
    script = (f"#!/bin/sh\ncurl -X POST \"$CI_API_GRAPHQL_URL\" -H 'Content-Type: application/json' -d '{body}'\n"
              f"curl -X POST \"$CI_API_GRAPHQL_URL\" -d '{unrelated}'\n")
    found = _scan(tmp_path, policies, {"pause.sh": script})
    column = script.splitlines()[1].index("$input)") + 1
    assert found == {("graphql-runner-active", "pause.sh", 2, column)}


def test_folded_block_scalars_map_findings_to_the_line_they_are_on(tmp_path: Path, policies: list[Policy]) -> None:
    """`>` joins lines with spaces: a finding on the third written line is reported there."""
    ci = (
        "runners:\n"
        "  script:\n"
        "    - >\n"
        '      curl --request PUT "$CI_API_V4_URL/runners/7"\n'
        '      --header "PRIVATE-TOKEN: $TOKEN"\n'
        '      --form "active=false"\n'
        "    - >-\n"
        '      curl -X POST "$CI_API_GRAPHQL_URL" -H "Content-Type: application/json"\n'
        "      -d '{\"query\": \"query { runners(active: true) { nodes { id } } }\"}'\n"
        "    - gitlab-runner register\n"
        "      --registration-token $REGISTRATION_TOKEN --url https://gitlab.example.com\n"
    )
    found = _scan(tmp_path, policies, {".gitlab-ci.yml": ci})
    lines = ci.splitlines()
    assert found == {
        ("rest-runner-active", ".gitlab-ci.yml", 6, lines[5].index("active") + 1),
        ("graphql-runner-active", ".gitlab-ci.yml", 9, lines[8].index("active") + 1),
        ("runner-registration-token", ".gitlab-ci.yml", 11, lines[10].index("--registration-token") + 1),
    }


def test_ruby_scripts_are_read_and_bundled_gems_are_not(tmp_path: Path, policies: list[Policy]) -> None:
    script = ('API = ENV.fetch("CI_API_V4_URL")\n'
              'HTTParty.put("#{API}/runners/#{ARGV[0]}", body: { active: false })\n')
    found = _scan(tmp_path, policies, {"tools/pause.rb": script, "vendor/bundle/ruby/3.2.0/gems/x/pause.rb": script})
    assert found == {("rest-runner-active", "tools/pause.rb", 2, script.splitlines()[1].index("active") + 1)}
