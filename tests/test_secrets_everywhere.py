# ruff: noqa: E501  (the planted lines are long on purpose: several secrets on one reported line)
"""Issue 13, "never leaks": a distinct secret in every shape, in every kind of file sunset reads, on
a line sunset reports (or in an include target, an input error, a `sunset fix --diff` hunk), and
not one of them in any output: the five scan formats, the merge-request comment, the fix diff.

So that this cannot pass by printing nothing, the lines that carry them are checked to be there,
masked. A property test throws random values (quotes, backslashes, spaces) at each shape, and a
200 KB line of each adversarial kind is redacted within a generous time limit in a subprocess.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scanner.cli import main
from scanner.core.redact import MASK, redact, redact_error, redact_line

ROOT = Path(__file__).resolve().parent.parent
FORMATS = ("text", "json", "sarif", "codequality", "markdown")
PLANTED: dict[str, str] = {}



def s(tag: str) -> str:
    value = "Zq" + hashlib.sha256(tag.encode()).hexdigest()[:14] + "x"
    PLANTED[tag] = value
    return value


FILES = {
    ".gitlab-ci.yml": f"""include:
  - remote: 'https://oauth2:{s("ci-remote-pw")}@gitlab.example.com/ci.yml?private_token={s("ci-remote-qs")}'
  - template: Terraform/Base.gitlab-ci.yml
variables:
  REGISTRATION_TOKEN: "pa\\"ss-{s("ci-escaped")}"
job:
  script:
    - gitlab-runner register --url https://oauth2:{s("ci-url-pw")}@gitlab.example.com --registration-token '{s("ci-regtoken")}'
    - 'curl -u root:{s("ci-curl-u")} --header "PRIVATE-TOKEN: {s("ci-private-token")}" --request PUT --form "active=false" "$CI_API_V4_URL/runners/1"'
    - 'curl --header "Authorization: Bearer {s("ci-bearer")}" --header "JOB-TOKEN: {s("ci-job-token")}" -XPUT "https://gitlab.example.com/api/v4/runners/2?private_token={s("ci-qs")}&access_token={s("ci-qs2")}" -d "active=false"'
    - DB_PASS={s("ci-dbpass")} gitlab-runner register --token glrt-{s("ci-glrt")} --url "$CI_SERVER_URL" --shell cmd --password={s("ci-flag-eq")}
    - gitlab-runner register --url $CI_SERVER_URL --registration-token GR1348941{s("ci-gr")} --shell cmd --token {s("ci-flag-space")}
""",
    "scripts/rotate.sh": f"""#!/bin/sh
curl -s --request PUT --user admin:{s("sh-user")} --header 'Deploy-Token: {s("sh-deploy")}' --data "active=false" "https://gitlab.example.com/api/v4/runners/3"
curl -s --request PUT --header "PRIVATE-TOKEN: glpat-{s("sh-glpat")}" --data "active=false" "$CI_API_V4_URL/runners/4" # token = "{s("sh-comment")}"
""",
    "tools/runners.py": f"""import os
import requests
API = os.environ["CI_API_V4_URL"]
requests.put(f"{{API}}/runners/1", headers={{"Authorization": f"Bearer {s("py-bearer")}"}}, auth=("root", "{s("py-auth")}"), data={{"active": False}})
requests.put(f"{{API}}/runners/2", headers={{"PRIVATE-TOKEN": 'It\\'s-{s("py-escaped")}'}}, data={{"active": False}}); password = "{s("py-assign")} two words"
""",
    "web/pause.ts": f"""const API = `${{process.env.CI_SERVER_URL}}/api/v4`;
export async function pause(id: number): Promise<void> {{
  await fetch(`${{API}}/runners/${{id}}`, {{ method: "PUT", headers: {{ Authorization: `Bearer {s("ts-bearer")}`, "JOB-TOKEN": "{s("ts-job")}" }}, body: JSON.stringify({{ active: false }}) }});
}}
""",
    "ruby/pause.rb": f"""API = ENV.fetch("CI_API_V4_URL")
HTTParty.put("https://root:{s("rb-url")}@gitlab.example.com/api/v4/runners/1", headers: {{ "PRIVATE-TOKEN" => "{s("rb-header")}", :password => '{s("rb-sym")}' }}, body: {{ active: false }})
""",
    "runners.tf": f"""resource "gitlab_runner" "x" {{ registration_token = "{s("tf-token")}" }}
""",
    "reset.graphql": f"""mutation Reset {{
  runnersRegistrationTokenReset(input: {{type: INSTANCE_TYPE, clientMutationId: "password={s("gql-pw")}"}}) {{ token errors }}
}}
""",
    "etc/gitlab/gitlab.rb": f"""gitlab_rails['initial_shared_runners_registration_token'] = "pa\\"ss-{s("rb-escaped")} and more"
git_data_dirs({{ 'default' => {{ 'path' => '/mnt', 'gitaly_address' => 'tcp://gitaly:{s("rb-tcp")}@gitaly1:8075', 'gitaly_token' => '{s("rb-gitaly")}' }} }})
registry['notifications'] = [{{ 'name' => 'n', 'threshold' => 5, 'headers' => {{ 'Authorization' => ['Bearer {s("rb-notify")}'] }} }}]
""",
    "config/gitlab.yml": f"""production: &base
  gitlab: {{host: x}}
  incoming_email:
    enabled: true
    delivery_method: webhook
    secret_file: /x/.gitlab_mailroom_secret
  registry:
    notifications:
    - {{name: n, url: "https://u:{s("gy-url")}@h/e", threshold: 5, headers: {{Authorization: [Bearer {s("gy-flow")}]}}}}
""",
    "config/database.yml": f"""production:
  ci: {{adapter: postgresql, database: x, password: 'It''s-{s("db-doubled")}', url: "postgresql://gitlab:{s("db-url")}@db/gitlabhq"}}
  main: {{adapter: postgresql, database: x}}
""",
    "runner/config.toml": f"""[[runners]]
  name = "w"
  shell = "cmd" # token = 'pa\\'ss-{s("toml-comment")}' url = "https://gitlab-ci-token:{s("toml-url")}@x" glrt-{s("toml-glrt")}
""",
    "registry/config.yml": f"""version: 0.1
storage:
  oss: {{accesskeyid: r, accesskeysecret: {s("reg-oss")}, region: x, bucket: b}}
""",
    "helm/gitlab-runner/values.yaml": f"""gitlabUrl: https://gitlab.example.com/
runnerRegistrationToken: "{s("helm-token")} with spaces"
""",
    "docker/docker-compose.yml": f"""services:
  gitlab:
    image: gitlab/gitlab-ee:17.11.0-ee.0
    environment:
      GITLAB_OMNIBUS_CONFIG: "gitlab_rails['initial_root_password'] = \\"{s("compose-omnibus")}\\"; git_data_dirs({{ 'default' => {{ 'path' => '/x' }} }})"
      GITLAB_SHARED_RUNNERS_REGISTRATION_TOKEN: "{s("compose-shared")}"
  runner:
    image: gitlab/gitlab-runner:v17.11.0
    environment:
      - REGISTRATION_TOKEN=two {s("compose-list-words")}
    command: ["register", "--registration-token", "{s("compose-exec")}", "--url", "https://oauth2:{s("compose-url")}@gitlab.example.com"]
""",
    "docker/Dockerfile": f"""FROM gitlab/gitlab-runner:v17.11.0
ENV REGISTRATION_TOKEN {s("docker-env")} second-word
RUN gitlab-runner register --registration-token "{s("docker-run")}" -r '{s("docker-r")}' --url https://oauth2:{s("docker-url")}@gitlab.example.com
""",
    "docker/runner.env": f"""REGISTRATION_TOKEN={s("env-token")} with words
""",
    "k8s/secret.yaml": f"""apiVersion: v1
kind: Secret
metadata: {{name: s}}
stringData:
  runner-registration-token: "{s("k8s-token")}"
""",
    "k8s/runner.yaml": f"""apiVersion: batch/v1
kind: Job
metadata: {{name: r}}
spec:
  template:
    spec:
      containers:
        - name: register
          image: gitlab/gitlab-runner:v17.11.0
          args: ["register", "--registration-token={s("k8s-args")}", "--url", "https://gitlab.example.com"]
""",
    "broken/.gitlab-ci.yml": f"""job:
  script: [echo
  password: "{s("err-yaml")}"
""",
    "broken3/tool.py": f"""import requests
requests.put("https://x/api/v4/runners/1", headers={{"PRIVATE-TOKEN": "{s("err-py")}"}} data=1)
""",
    "broken4/q.graphql": f"""mutation {{ runnersRegistrationTokenReset(input: {{type: INSTANCE_TYPE}}) {{ token }} }} {s("err-gql")} "
""",
    "broken2/config.toml": f"""[[runners]]
  token = = "{s("err-toml")}"
""",
}
# Lines whose secrets reach the output only through something other than a finding's line.
NOT_A_FINDING = {(".gitlab-ci.yml", 2), ("broken/.gitlab-ci.yml", 3), ("broken2/config.toml", 2),
                 ("broken3/tool.py", 2), ("broken4/q.graphql", 1)}


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("everywhere")
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    main(argv)
    captured = capsys.readouterr()
    return captured.out + captured.err


def _leaks(text: str) -> list[str]:
    return [tag for tag, value in PLANTED.items() if value in text]


@pytest.mark.parametrize("fmt", FORMATS)
def test_no_planted_secret_in_any_format(tree: Path, fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert _leaks(_run(["scan", str(tree), "--format", fmt, "--fail-on", "never", "--color", "never"], capsys)) == []


def test_no_planted_secret_in_the_comment(tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "report.json"
    main(["scan", str(tree), "--format", "json", "--fail-on", "never", "--output", str(report)])
    out = _run(["comment", "--report", str(report), "--dry-run"], capsys)
    assert _leaks(out) == []
    assert "<!-- sunset:report -->" in out and "ruby/pause.rb:2" in out
    assert f"HTTParty.put(\"https://root:{MASK}@gitlab.example.com/api/v4/runners/1\"" in out


def test_no_planted_secret_in_the_fix_diff(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _run(["fix", str(tree), "--diff", "--unsafe"], capsys)
    assert _leaks(out) == []
    # the diff is there, with the secrets' lines masked (changed and context lines alike)
    assert "+  main: {adapter: postgresql, database: x}" in out
    assert f"   ci: {{adapter: postgresql, database: x, password: '{MASK}', url: \"postgresql://gitlab:{MASK}@db/" in out
    assert f"--header \"Authorization: {MASK}\" --header \"JOB-TOKEN: {MASK}\"" in out


def test_every_planted_line_is_reported_masked(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Not vacuous: each line carrying a planted secret is in the text report, masked."""
    out = _run(["scan", str(tree), "--format", "text", "--fail-on", "never", "--color", "never"], capsys)
    missing = []
    for rel, text in FILES.items():
        for number, line in enumerate(text.splitlines(), 1):
            planted = any(v in line for v in PLANTED.values()) and (rel, number) not in NOT_A_FINDING
            if planted and not re.search(rf"^{re.escape(rel)}:{number}:\d+: ", out, re.M):
                missing.append((rel, number))
    assert missing == []
    for shown in (
        f'REGISTRATION_TOKEN: "{MASK}"',  # "pa\"ss-…": the escaped quote does not end the value
        f"password: '{MASK}'",  # 'It''s-…': a doubled quote does not either
        f"--registration-token '{MASK}'",
        f"https://oauth2:{MASK}@gitlab.example.com",
        f"-u root:{MASK} --header \"PRIVATE-TOKEN: {MASK}\"",
        f"?private_token={MASK}&access_token={MASK}",
        f"DB_PASS={MASK} gitlab-runner register --token {MASK}",
        f"--password={MASK}",
        f"'gitaly_address' => 'tcp://gitaly:{MASK}@gitaly1:8075', 'gitaly_token' => '{MASK}'",
        f"initial_root_password'] = \\\"{MASK}\\\"",
        f"ENV REGISTRATION_TOKEN {MASK}",
        f"REGISTRATION_TOKEN={MASK}",
        f'runnerRegistrationToken: "{MASK}"',
        f"accesskeysecret: {MASK},",
        f"headers={{\"Authorization\": f\"{MASK}\"}}, auth=(\"{MASK}\", \"{MASK}\")",
        f"Authorization: `{MASK}`, \"JOB-TOKEN\": \"{MASK}\"",
        f"'Deploy-Token: {MASK}'",
    ):
        assert shown in out, shown


def test_includes_and_input_errors_are_masked(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = json.loads(_run(["scan", str(tree), "--format", "json", "--fail-on", "never"], capsys))
    targets = [i["target"] for i in report["includes"]]
    assert f"https://oauth2:{MASK}@gitlab.example.com/ci.yml?private_token={MASK}" in targets
    errors = {(e["path"], e["line"]): e["message"] for e in report["errors"]}
    assert errors[("broken4/q.graphql", 1)] == f"invalid GraphQL: Syntax Error: Unexpected Name '{MASK}'."
    assert ("broken/.gitlab-ci.yml", 2) in errors and ("broken3/tool.py", 2) in errors


# ---------------------------------------------------------------- the redactor itself, any value


def _dq(v: str) -> str:
    return v.replace("\\", "\\\\").replace('"', '\\"')


def _sq_yaml(v: str) -> str:
    return v.replace("'", "''")


def _sq_py(v: str) -> str:
    return v.replace("\\", "\\\\").replace("'", "\\'")


# (template, how the value is written in it, characters the value may not contain)
SHAPES = [
    ('  password: "{}"', _dq, ""),
    ("  password: '{}'", _sq_yaml, ""),
    ("  password: {}", str, "#'\"`[{"),
    ("gitlab_rails['db_password'] = \"{}\"", _dq, ""),
    ("token = '{}'", _sq_py, ""),
    ("gitlab-runner register --token={} --url $U", str, " '\"`&;|)<>,"),
    ("gitlab-runner register --registration-token {} --url $U", str, " '\"`&;|)<>,"),
    ("curl -u root:{} https://x", str, " '\"`&;|)<>,"),
    ('curl --header "PRIVATE-TOKEN: {}" https://x/api/v4/runners', _dq, ""),
    ('curl -H "Authorization: Bearer {}" https://x', _dq, ""),
    ("git clone https://oauth2:{}@gitlab.com/x.git", str, " /?#@'\"`<>"),
    ("wget https://x/api/v4/runners?private_token={}&a=1", str, " &#'\"`;|)<>,"),
    ("DB_PASS={}", str, "#'\"`"),
    ('requests.put(u, headers={{"Authorization": f"Bearer {}"}})', _dq, ""),
    ('ENV REGISTRATION_TOKEN {}', str, "'\"`"),
]
_ALPHABET = st.characters(min_codepoint=0x20, max_codepoint=0x7E, blacklist_characters="$%{}<>`#")


@given(tail=st.text(_ALPHABET, min_size=4, max_size=40), index=st.integers(0, len(SHAPES) - 1))
def test_random_values_never_survive(tail: str, index: int) -> None:
    template, written_as, forbidden = SHAPES[index]
    value = "Zq9" + "".join(ch for ch in tail if ch not in forbidden).rstrip() + "k7"
    written = written_as(value)
    line = template.format(written)
    assert written not in redact_line(line), line
    assert value not in redact(line, diff=False)


_ADVERSARIAL = [
    "'# ' + 'a' * N", "'tokenpassword' * (N // 13)", "'password=' * (N // 9)", "\"password: '\" + '\\\\\\'' * (N // 2)",
    "'://' * (N // 3)", "'https://u:' + 'p' * N + '@h'", "'password: ' + '{{' * (N // 2)", "'glpat-' * (N // 6)",
    "'key:' * (N // 4)", "'--token ' * (N // 8)", "'auth=(' + \"'a',\" * (N // 4)", "'x = \"' + '\\\\\\\\' * N",
    "'- echo token # ' + 'x ' * (N // 2)", "\"'\" + 'a1' * (N // 2)", "'Authorization: Bearer ' * (N // 22)",
]


@pytest.mark.slow
def test_redaction_is_linear_on_60_kb_lines() -> None:
    """Each adversarial 60 KB line is redacted in a subprocess that must finish within 60 s (a
    quadratic redactor took minutes on 40 KB); this asserts completion, not a speed."""
    code = (
        "from scanner.core.redact import redact_line, redact_error\nN = 60_000\n"
        + "".join(f"redact_line({expr}); redact_error({expr})\n" for expr in _ADVERSARIAL)
        + "print('done')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "done"


def test_quoted_words_in_errors() -> None:
    assert redact_error("Unexpected Name 'x7Fk29aQ1'.") == f"Unexpected Name '{MASK}'."
    assert redact_error("expected ',' or ']', but got ':'") == "expected ',' or ']', but got ':'"


def test_distinct_values() -> None:
    assert len(set(PLANTED.values())) == len(PLANTED) >= 50
    assert all(hashlib.sha256(t.encode()).hexdigest()[:14] in v for t, v in PLANTED.items())


@pytest.mark.parametrize(("value", "shown"), [
    ("Zq90.A(k7", "  password: ****"),  # found by test_random_values_never_survive
    ("x.A(k7", "  password: ****"),
    ("Zq9a.B()k7", "  password: ****"),  # a call's shape, then more of the value
    ('vault.read("x")', '  password: vault.read("x")'),  # code computing the value stays
    ('requests.post(u).json()["token"]', '  password: requests.post(u).json()["token"]'),
    ("Rails.application.credentials.dig(:db, :password)", "  password: Rails.application.credentials.dig(:db, :password)"),
])
def test_only_a_whole_method_call_is_code(value: str, shown: str) -> None:
    assert redact_line(f"  password: {value}") == shown
