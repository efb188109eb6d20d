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
