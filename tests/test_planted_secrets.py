"""Issue 27, masking safe by default: over 200 planted forms (`tests/planted.py`), each on a line
sunset reports, and not one value in any output — every format on stdout and in `--output` files,
colour text, the merge-request comment, a scan of standard input, `sunset fix --diff`, input errors.

So that this cannot pass by printing nothing, every planted line is checked to be reported. The
other half of the promise is checked too: what is not a secret (each policy fixture's matched
text, a component address) is shown as written.
"""

from __future__ import annotations

import io
import json
import os
import random
import string
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from planted import ALNUM, Form, forms, made

from scanner.cli import main
from scanner.core.redact import MASK, redact, redact_error, redact_line

from conftest import examples

FORMS = forms()
VALUES = {f.name: f.value for f in FORMS}
FORMATS = ("text", "concise", "json", "sarif", "codequality", "markdown", "html")

# Each job's script line starts with a deprecated variable, so the line is a finding's line.
CI_PREFIX = 'echo "$CI_JOB_JWT"; '
SH_PREFIX = 'gitlab-runner register --url "$U" --registration-token "$T"; '

# Secrets reaching an output through something other than a finding's line.
ERROR_FORMS = {
    "missing-include-name": made("missing-include-name", "ci-", ALNUM, 24),
    "yaml-error": made("yaml-error", "", ALNUM, 26),
    "toml-error": made("toml-error", "", ALNUM, 26),
    "graphql-error": made("graphql-error", "Zq", ALNUM, 22),
    "include-remote-sas": made("include-remote-sas", "", ALNUM, 43),
    "include-remote-userinfo": made("include-remote-userinfo", "", ALNUM, 20),
}
# Lines shown as context of `sunset fix --diff` (three lines either side of a fixed line).
DIFF_FORMS = {
    "diff-key-body-2": made("diff-key-body-2", "", string.ascii_letters + string.digits + "+/", 64),
    "diff-key-body-3": made("diff-key-body-3", "", string.ascii_letters + string.digits + "+/", 64),
    "diff-key-last": made("diff-key-last", "", ALNUM, 6) + "==",
    "diff-sentry": made("diff-sentry", "", "0123456789abcdef", 32),
    "diff-slack": made("diff-slack", "T0AB12CD/B0AB12CD/", ALNUM, 24),
    "diff-fetch-default": "walnutEmber" + str(len("diff")) + "7",
}
ALL = {**VALUES, **ERROR_FORMS, **DIFF_FORMS}


def _ci(items: list[Form]) -> str:
    return "".join(f"job_{i}:\n  script:\n    - |\n      {CI_PREFIX}{f.template.format(v=f.value)}\n"
                   for i, f in enumerate(items))


def _ci_lines(items: list[Form]) -> dict[str, int]:
    return {f.name: 4 + 4 * i for i, f in enumerate(items)}


def _diff_file() -> str:
    d = DIFF_FORMS
    return (
        "variables:\n"
        "  DEPLOY_KEY: |\n"
        "    -----BEGIN OPENSSH PRIVATE KEY-----\n"
        "    b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
        f"    {d['diff-key-body-2']}\n"
        f"    {d['diff-key-body-3']}\n"
        f"    {d['diff-key-last']}\n"
        "    -----END OPENSSH PRIVATE KEY-----\n"
        "types: [build]\n"
        f"# monitoring: https://{d['diff-sentry']}@o12345.ingest.sentry.io/42\n"
        f"# notify: https://hooks.slack.com/services/{d['diff-slack']}\n"
        f"# db: ENV.fetch('DB_PASSWORD', '{d['diff-fetch-default']}')\n"
        "build:\n  stage: build\n  script: [make]\n"
    )


def _tree(root: Path) -> Path:
    (root / "ci").mkdir(parents=True)
    (root / "ci" / ".gitlab-ci.yml").write_text(_ci(FORMS), encoding="utf-8")
    (root / "scripts").mkdir()
    sh = "#!/bin/sh\n" + "".join(f"{SH_PREFIX}{f.template.format(v=f.value)}\n" for f in FORMS)
    (root / "scripts" / "planted.sh").write_text(sh, encoding="utf-8")
    e = ERROR_FORMS
    (root / "errors").mkdir()
    (root / "errors" / ".gitlab-ci.yml").write_text(
        f"include:\n  - local: /secrets/{e['missing-include-name']}.yml\n"
        f"  - remote: 'https://b.blob.core.windows.net/c/ci.yml?sv=2022&sig={e['include-remote-sas']}'\n"
        f"  - remote: 'https://{e['include-remote-userinfo']}@gitlab.example.com/g/p/-/raw/main/ci.yml'\n"
        "job:\n  script: [echo]\n", encoding="utf-8")
    (root / "errors" / "broken").mkdir()
    (root / "errors" / "broken" / ".gitlab-ci.yml").write_text(
        f"job:\n  script: [echo\n  key: {e['yaml-error']}: x\n", encoding="utf-8")
    (root / "errors" / "runner").mkdir()
    (root / "errors" / "runner" / "config.toml").write_text(
        f'[[runners]]\n  token = = "{e["toml-error"]}"\n', encoding="utf-8")
    (root / "errors" / "q.graphql").write_text(
        "mutation { runnersRegistrationTokenReset(input: {type: INSTANCE_TYPE}) { token } } "
        f"{e['graphql-error']} \"\n", encoding="utf-8")
    (root / "diff").mkdir()
    (root / "diff" / ".gitlab-ci.yml").write_text(_diff_file(), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _tree(tmp_path_factory.mktemp("planted"))


def _run(argv: list[str], capsys: pytest.CaptureFixture[str], stdin: str | None = None) -> str:
    old = sys.stdin
    if stdin is not None:
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode()), encoding="utf-8")
    try:
        main(argv)
    finally:
        sys.stdin = old
    captured = capsys.readouterr()
    return captured.out + captured.err


def _leaks(text: str) -> list[str]:
    return sorted(name for name, value in ALL.items() if value in text)


def test_the_tree_has_over_200_forms() -> None:
    assert len(FORMS) >= 200
    assert len(set(VALUES.values())) == len(VALUES)


@pytest.mark.parametrize("fmt", FORMATS)
def test_no_leak_in_any_format(tree: Path, fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert _leaks(_run(["scan", str(tree), "--format", fmt, "--fail-on", "never", "--color", "never"], capsys)) == []


def test_no_leak_in_colour_text_and_statistics(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _leaks(_run(["scan", str(tree), "--color", "always", "--fail-on", "never"], capsys)) == []
    assert _leaks(_run(["scan", str(tree), "--statistics", "--fail-on", "never"], capsys)) == []


def test_no_leak_in_output_files(tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["scan", str(tree), "--fail-on", "never", "--color", "never"]
    for fmt in FORMATS:
        argv += ["--output", f"{fmt}={tmp_path / ('report.' + fmt)}"]
    assert _leaks(_run(argv, capsys)) == []
    for fmt in FORMATS:
        written = (tmp_path / f"report.{fmt}").read_text(encoding="utf-8")
        assert MASK in written and _leaks(written) == [], fmt


def test_every_planted_line_is_reported_masked(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Not vacuous: each planted line is a finding's line, and its snippet carries a mask."""
    report = json.loads(_run(["scan", str(tree), "--format", "json", "--fail-on", "never"], capsys))
    snippets = {(f["path"], f["line"]): f["snippet"] for f in report["findings"]}
    missing = []
    for name, line in _ci_lines(FORMS).items():
        if MASK not in snippets.get(("ci/.gitlab-ci.yml", line), ""):
            missing.append(("ci", name))
    for i, f in enumerate(FORMS):
        if MASK not in snippets.get(("scripts/planted.sh", i + 2), ""):
            missing.append(("sh", f.name))
    assert missing == []


def test_errors_and_includes_are_reported_masked(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = json.loads(_run(["scan", str(tree), "--format", "json", "--fail-on", "never"], capsys))
    errors = {(e["path"], e["line"]) for e in report["errors"]}
    assert {("errors/.gitlab-ci.yml", 2), ("errors/runner/config.toml", 2), ("errors/q.graphql", 1)} <= errors
    assert any(p == "errors/broken/.gitlab-ci.yml" for p, _ in errors)
    targets = {i["target"] for i in report["includes"]}
    assert f"https://b.blob.core.windows.net/c/ci.yml?sv=2022&sig={MASK}" in targets
    assert f"https://{MASK}@gitlab.example.com/g/p/-/raw/main/ci.yml" in targets


def test_no_leak_in_the_comment(tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "report.json"
    main(["scan", str(tree), "--format", "json", "--fail-on", "never", "--output", str(report)])
    capsys.readouterr()
    out = _run(["comment", "--report", str(report), "--dry-run"], capsys)
    assert "<!-- sunset:report -->" in out and _leaks(out) == []


def test_a_report_from_elsewhere_is_masked_in_the_comment(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`comment --report` reads a file anyone could have written: its raw secrets are masked too."""
    (tmp_path / ".gitlab-ci.yml").write_text('job:\n  script: [echo "$CI_JOB_JWT"]\n', encoding="utf-8")
    path = tmp_path / "r.json"
    main(["scan", str(tmp_path / ".gitlab-ci.yml"), "--format", "json", "--fail-on", "never", "--output", str(path)])
    report = json.loads(path.read_text(encoding="utf-8"))
    finding = report["findings"][0]
    finding["snippet"] = "curl -H 'PRIVATE-TOKEN: " + VALUES["header-private-token"] + "' " + VALUES["github-pat"]
    finding["message"] = f"leaked {VALUES['aws-akia']}"
    finding["path"] = f"a/{VALUES['random-alnum-20']}.sh"
    finding["replacement"] = VALUES["stripe-live"]
    report["errors"] = [{"path": "b", "line": 1, "message": f"bad '{VALUES['slack-bot']}'"}]
    path.write_text(json.dumps(report), encoding="utf-8")
    capsys.readouterr()
    out = _run(["comment", "--report", str(path), "--dry-run"], capsys)
    assert "<!-- sunset:report -->" in out and MASK in out
    assert _leaks(out) == []


def test_no_leak_from_standard_input(capsys: pytest.CaptureFixture[str]) -> None:
    text = _ci(FORMS)
    out = _run(["scan", "-", "--stdin-filename", ".gitlab-ci.yml", "--format", "json", "--fail-on", "never"], capsys,
               stdin=text)
    report = json.loads(out)
    assert {f["line"] for f in report["findings"]} >= set(_ci_lines(FORMS).values())
    assert _leaks(out) == []


def test_no_leak_in_the_fix_diff(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _run(["fix", str(tree / "diff"), "--diff", "--unsafe"], capsys)
    assert "+stages: [build]" in out, out
    assert _leaks(out) == []
    # the context lines are there, masked, and the output says a masked diff is for reading
    assert f"# monitoring: https://{MASK}@o12345.ingest.sentry.io/42" in out
    assert "# notify: https://hooks.slack.com/" in out
    assert f"     {MASK}\n     -----END OPENSSH PRIVATE KEY-----\n" in out
    assert "for reading, not for `git apply`" in out


# ------------------------------------------------------------- nothing that is not a secret is masked


def test_a_component_address_is_shown() -> None:
    address = "$CI_SERVER_FQDN/group/project/scan@1.0"
    assert redact_line(f"  - component: {address}") == f"  - component: {address}"
    error = f"component `{address}`: no templates/scan.yml"
    assert redact_error(error) == error
    sha = "e3262fdd0914fa823210cdb79a8c421e2cef79d8"
    assert redact_line(f"  - component: gitlab.com/g/p/scan@{sha}") == f"  - component: gitlab.com/g/p/scan@{sha}"


@pytest.mark.parametrize("path", ["/tmp/h2/pol/x/my-jwks.yaml", "ci/a/b2/x/deploy-jobs.yml", "/srv/gl/v1/values.yaml"])
def test_a_path_of_short_words_is_shown(path: str) -> None:
    error = f"{path}:24: match: regex: 'x' is not RE2 syntax"
    assert redact_error(error) == error


def test_policy_matches_are_never_masked(capsys: pytest.CaptureFixture[str]) -> None:
    """Every policy fixture's deprecated text (the finding's columns on its line) is shown as
    written in the snippet, and a message naming it names it unmasked."""
    fixtures = Path(__file__).parent / "policies"
    report = json.loads(_run(["scan", str(fixtures), "--format", "json", "--fail-on", "never", "--target", "99"],
                             capsys))
    hidden = []
    for f in report["findings"]:
        if f["end_line"] != f["line"] or f["path"] == "-":
            continue
        source = Path(f["path"]).read_text(encoding="utf-8").splitlines()[f["line"] - 1]
        matched = source[f["column"] - 1 : f["end_column"] - 1]
        if matched not in f["snippet"] or (f"`{MASK}`" in f["message"] and f"`{matched}`" not in f["message"]):
            hidden.append((f["rule_id"], f["path"], f["line"], matched))
    assert hidden == []


# ------------------------------------------------------------- the property: random tokens anywhere

FINDING_LINES = [
    '      echo "$CI_JOB_JWT" > token.txt',
    "    - gitlab-runner register --url https://gitlab.example.com --registration-token $REG --executor shell",
    "  - template: Security/License-Scanning.gitlab-ci.yml",
    "gitlab_rails['gitlab_shell_ssh_port'] = 22 # comment",
    '  curl --request PUT --header "PRIVATE-TOKEN: $TOKEN" "$CI_API_V4_URL/runners/1" --form "active=false"',
    "  - remote: 'https://gitlab.example.com/g/p/-/raw/main/ci.yml'",
    "RUN gitlab-runner register --non-interactive --executor docker --docker-image alpine",
    'requests.put(f"{API}/runners/1", data={"active": False})',
]


@settings(max_examples=examples(400), deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**64 - 1), line=st.sampled_from(FINDING_LINES), where=st.floats(0, 1),
       length=st.integers(20, 64), alphabet=st.sampled_from([ALNUM, ALNUM + "_-", ALNUM + "+/", "0123456789abcdef"]))
def test_random_tokens_never_survive(seed: int, line: str, where: float, length: int, alphabet: str) -> None:
    rng = random.Random(seed)
    token = "".join(rng.choice(alphabet) for _ in range(length))
    at = int(where * len(line))
    planted = f"{line[:at]} {token} {line[at:]}"
    assert token not in redact_line(planted), planted
    assert token not in redact(planted, diff=True)
    assert token not in redact_error(planted)


# ------------------------------------------------------------- the other commands and their messages


@pytest.fixture()
def standin_token(monkeypatch: pytest.MonkeyPatch) -> str:
    from gitlab_standin import TOKEN

    monkeypatch.setenv("SUNSET_GITLAB_TOKEN", TOKEN)
    monkeypatch.delenv("CI_JOB_TOKEN", raising=False)
    return TOKEN


def test_no_leak_in_the_instance_scan(standin_token: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`sunset scan --gitlab URL --group PATH` over a project holding every planted form, an include
    named after a secret that does not exist and one whose address holds a signature: every format,
    its `--output` files, and the per-project part of the JSON report."""
    from gitlab_standin import Instance, StandIn

    e = ERROR_FORMS
    inst = Instance()
    inst.add("acme/app", {".gitlab-ci.yml": _ci(FORMS) + (
        f"include:\n  - local: /secrets/{e['missing-include-name']}.yml\n"
        f"  - project: acme/{e['missing-include-name']}\n    file: ci.yml\n")})
    lines = {name: line for name, line in _ci_lines(FORMS).items()}
    with StandIn(inst) as url:
        argv = ["scan", "--gitlab", url, "--group", "acme", "--fail-on", "never", "--cache-dir", str(tmp_path / "c")]
        outputs = [arg for fmt in FORMATS for arg in ("--output", f"{fmt}={tmp_path / ('r.' + fmt)}")]
        out = _run([*argv, "--format", "json", *outputs], capsys)
        for fmt in ("text", "sarif", "markdown"):
            assert _leaks(_run([*argv, "--format", fmt, "--color", "never"], capsys)) == [], fmt
    assert _leaks(out) == []
    for fmt in FORMATS:
        assert _leaks((tmp_path / f"r.{fmt}").read_text(encoding="utf-8")) == [], fmt
    report = json.loads(out)
    snippets = {f["line"]: f["snippet"] for f in report["findings"] if f["path"] == "acme/app@main:.gitlab-ci.yml"}
    assert [name for name, line in lines.items() if MASK not in snippets.get(line, "")] == []
    errors = [(e["path"], e["line"]) for e in report["errors"]]
    last = 4 * len(FORMS)
    assert errors == [("acme/app@main:.gitlab-ci.yml", last + 2), ("acme/app@main:.gitlab-ci.yml", last + 4)]


def test_no_leak_in_the_posted_comment(tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The note a real HTTP server speaking GitLab's notes API receives, and what `--verbose` logs."""
    import threading

    from test_comment import FakeGitLab, Handler, _Server, ci_env

    report = tmp_path / "report.json"
    main(["scan", str(tree), "--format", "json", "--fail-on", "never", "--output", str(report)])
    capsys.readouterr()
    gl = FakeGitLab()
    server = _Server(("127.0.0.1", 0), Handler)
    server.gitlab = gl
    gl.base = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    env = ci_env(gl)
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        out = _run(["comment", "--report", str(report), "--verbose"], capsys)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        server.shutdown()
        server.server_close()
        thread.join()
    assert "sunset: urllib3.connectionpool: " in out  # `--verbose` logged the requests
    [note] = gl.notes
    assert "<!-- sunset:report -->" in note["body"] and MASK in note["body"]
    assert _leaks(note["body"]) == [] and _leaks(out) == []


def test_no_leak_in_show_settings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--show-settings` prints each resolved value: one that holds a credential is masked."""
    v = VALUES
    (tmp_path / ".git").mkdir()
    (tmp_path / ".sunset.yml").write_text(
        f'target: "18.0"\nexclude: ["vendor/{v["gitlab-pat"]}/**"]\n'
        f'ci_config_path: "https://oauth2:{v["random-alnum-20"]}@gitlab.example.com/g/p/-/raw/main/ci.yml"\n',
        encoding="utf-8")
    out = _run(["scan", str(tmp_path), "--show-settings", "--extend-exclude", v["aws-akia"], "--select",
                "ci-job-jwt-variables", "--config", str(tmp_path / ".sunset.yml")], capsys)
    assert "exclude         vendor/****/**" in out
    assert "ci_config_path  https://oauth2:****@gitlab.example.com/g/p/-/raw/main/ci.yml" in out
    assert "extend_exclude  ****" in out and "select          ci-job-jwt-variables" in out
    assert _leaks(out) == []


def test_no_leak_in_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A value quoted back in a one-line error (a file name, a policy id, a URL) is masked, for every
    command that quotes one."""
    v = VALUES
    secret = v["gitlab-pat"]
    cases = [
        ["scan", str(tmp_path), "--select", v["github-pat"]],
        ["scan", str(tmp_path), "--target", v["stripe-live"]],
        ["scan", str(tmp_path), "--config", str(tmp_path / f"{secret}.yml")],
        ["scan", str(tmp_path), "--baseline", str(tmp_path / f"{v['aws-akia']}.json")],
        ["scan", str(tmp_path), "--policies", str(tmp_path / v["slack-bot"])],
        ["scan", str(tmp_path), "--write-baseline", str(tmp_path / v["npm"] / "b.json")],
        ["scan", str(tmp_path), "-o", f"json={tmp_path / v['pypi'] / 'r.json'}"],
        ["scan", "--gitlab", f"ftp://oauth2:{v['random-alnum-20']}@gitlab.example.com", "--group", "g"],
        ["comment", "--report", str(tmp_path / f"{v['github-oauth']}.json"), "--dry-run"],
        ["fix", str(tmp_path), "--config", str(tmp_path / f"{v['stripe-test']}.yml")],
        ["allowlist", "--gitlab", f"ftp://u:{v['random-alnum-20']}@h", "--group", "g"],
    ]
    (tmp_path / ".gitlab-ci.yml").write_text("job:\n" + f"  script: [{CI_PREFIX}]\n", encoding="utf-8")
    said = []
    for argv in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err and MASK in err, (argv, err)
        said.append(err)
    assert _leaks("".join(said)) == []


def test_no_leak_in_warnings(tmp_path: Path) -> None:
    """A report's warnings are masked as its errors are (`redact_report`)."""
    from scanner.core.redact import redact_report
    from scanner.core.results import InputError, Report

    warning = InputError("a.rb", 3, f"templated value not read ('{VALUES['github-pat']}')")
    report = Report(target="19.0", warnings=[warning])
    assert [w.message for w in redact_report(report).warnings] == [f"templated value not read ('{MASK}')"]


def test_no_leak_in_the_allowlist_output(standin_token: str, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """`sunset allowlist`: an API error is masked, and a result it cannot write is one line, exit 2."""
    from gitlab_standin import Instance, StandIn

    inst = Instance()
    inst.add("corp/app", {}, inbound_enabled=True, auth_log=[("corp/tool", "2026-11-20")])
    inst.add("corp/tool", {})
    with StandIn(inst) as url:
        assert main(["allowlist", "--gitlab", url, "--group", "corp", "--format", "json"]) == 1
        out = json.loads(capsys.readouterr().out)
        assert [(g["target"], g["origin"]) for g in out["rejected"]] == [("corp/app", "corp/tool")]
        target = tmp_path / VALUES["gitlab-pat"] / "out.json"
        assert main(["allowlist", "--gitlab", url, "--group", "corp", "-o", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("sunset: cannot write the result to ") and err.endswith(" does not exist\n")
    assert err.count("\n") == 1 and MASK in err and _leaks(err) == []


# The finding lines of the property below, each in the file kind that reports it: (name, line, text
# with a `{}` where the token goes). The places are everywhere a word can stand on the line and the
# file still be read: between words, inside quotes, in a comment.
CLI_SLOTS = [
    (".gitlab-ci.yml", 2, 'job:\n  script: [echo{} "$CI_JOB_JWT"]\n'),
    (".gitlab-ci.yml", 2, 'job:\n  script: [echo "$CI_JOB_JWT{}"]\n'),
    (".gitlab-ci.yml", 2, 'job:\n  script: [echo "$CI_JOB_JWT",{}]\n'),
    (".gitlab-ci.yml", 2, 'job:\n  script: [echo "$CI_JOB_JWT"]  #{}\n'),
    ("rotate.sh", 2, '#!/bin/sh\ngitlab-runner register{} --url "$U" --registration-token "$T"\n'),
    ("rotate.sh", 2, '#!/bin/sh\ngitlab-runner register --url "$U{}" --registration-token "$T"\n'),
    ("rotate.sh", 2, '#!/bin/sh\ngitlab-runner register --url "$U" --registration-token "$T"{}\n'),
    ("rotate.sh", 2, '#!/bin/sh\ngitlab-runner register --url "$U" --registration-token "$T" #{}\n'),
    ("gitlab.rb", 1, "sidekiq['queue_selector'] = true #{}\n"),
    ("gitlab.rb", 1, "sidekiq['queue_selector'] = true # queues{} by selector\n"),
]


@settings(max_examples=max(5, settings.default.max_examples // 5), deadline=None)
@given(seed=st.integers(0, 2**64 - 1), slot=st.sampled_from(CLI_SLOTS), length=st.integers(20, 64),
       alphabet=st.sampled_from([ALNUM, ALNUM + "_-", ALNUM + "+/", "0123456789abcdef"]))
def test_random_tokens_never_reach_an_output(seed: int, slot: tuple[str, int, str], length: int, alphabet: str) -> None:
    """The property through the command: a random high-entropy token standing as a word anywhere on
    a finding's line is in no format sunset writes (stdout, stderr and every `--output` file)."""
    import contextlib
    import tempfile

    rng = random.Random(seed)
    token = "".join(rng.choice(alphabet) for _ in range(length))
    name, line, template = slot
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / name).write_text(template.format(" " + token), encoding="utf-8")
        argv = ["scan", str(root), "--fail-on", "never", "--color", "never", "--format", "json", "--target", "17.0"]
        argv += [arg for fmt in FORMATS for arg in ("--output", f"{fmt}={root / ('out.' + fmt)}")]
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            main(argv)
        written = {fmt: (root / f"out.{fmt}").read_text(encoding="utf-8") for fmt in FORMATS}
    report = json.loads(out.getvalue())
    assert line in {f["line"] for f in report["findings"]}, report  # not vacuous: the line is reported
    for fmt, shown in [("stdout and stderr", out.getvalue() + err.getvalue()), *written.items()]:
        assert token not in shown, (fmt, template)
