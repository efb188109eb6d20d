"""Inline suppressions (strict grammar, expiry), the baseline, and `.sunset.yml`."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scanner.cli import main
from scanner.core.results import InputError
from scanner.core.versions import Version
from scanner.engine.scan import ScanOptions, scan
from scanner.engine.suppress import Problem, Suppression, Suppressions, comment_column, parse_line
from scanner.rules.catalog import load_policies
from scanner.rules.policy import Policy

from conftest import where
from test_engine import DATA, write

KNOWN = frozenset({"t-variable", "t-template"})


@pytest.fixture(scope="module")
def test_policies() -> list[Policy]:
    return load_policies([DATA])


@pytest.mark.parametrize(
    ("line", "parsed"),
    [
        (
            "# sunset: ignore[t-variable] migrating in Q3",
            Suppression(1, frozenset({"t-variable"}), None, "migrating in Q3"),
        ),
        ("  OLD_VAR: x  # sunset: ignore[t-variable,t-template] both", Suppression(1, KNOWN, None, "both")),
        (
            "#sunset: ignore[t-variable] until=2027-03-01 vendor fix pending",
            Suppression(1, frozenset({"t-variable"}), date(2027, 3, 1), "vendor fix pending"),
        ),
        ("# just a comment", None),
        ("# sunset: scans this repository on every pipeline", None),
        ("# sunset: ignore[t-variable]", Suppression(1, frozenset({"t-variable"}), None, "")),  # a reason is optional
        (
            "# sunset: ignore[t-variable] until=2027-03-01",
            Suppression(1, frozenset({"t-variable"}), date(2027, 3, 1), ""),
        ),
        (
            "# sunset: ignore[T-Variable] caps",
            Problem(1, "malformed suppression; expected `# sunset: ignore[policy-id] reason`"),
        ),
        (
            "# sunset: ignore[t-variable, t-template] spaced",
            Problem(1, "malformed suppression; expected `# sunset: ignore[policy-id] reason`"),
        ),
        (
            "# sunset: ignore t-variable reason",
            Problem(1, "malformed suppression; expected `# sunset: ignore[policy-id] reason`"),
        ),
        (
            "# sunset: disable[t-variable] reason",
            Problem(1, "malformed suppression; expected `# sunset: ignore[policy-id] reason`"),
        ),
        (
            "# sunset: ignore[] reason",
            Problem(1, "malformed suppression; expected `# sunset: ignore[policy-id] reason`"),
        ),
        ("# sunset: ignore[no-such-policy] reason", Problem(1, "suppression names unknown policy 'no-such-policy'")),
        (
            "# sunset: ignore[t-variable] until=2027-02-30 bad day",
            Problem(1, "suppression has an invalid date '2027-02-30'; use until=YYYY-MM-DD"),
        ),
        (
            "# sunset: ignore[t-variable] until=tomorrow soon",
            Problem(1, "suppression has an invalid date 'tomorrow'; use until=YYYY-MM-DD"),
        ),
    ],
)
def test_grammar(line: str, parsed: Suppression | Problem | None) -> None:
    assert parse_line(line, 1, KNOWN) == parsed


def test_suppressions_apply_on_the_line_or_the_line_above(tmp_path: Path, test_policies: list[Policy]) -> None:
    write(
        tmp_path,
        {
            ".gitlab-ci.yml": (
                "variables:\n"
                "  # sunset: ignore[t-variable] moving to id_tokens next sprint\n"
                "  OLD_VAR: a\n"
                "j:\n"
                "  variables:\n"
                "    OLD_VAR: b  # sunset: ignore[t-variable] until=2026-12-31 pending vendor\n"
                "k:\n"
                "  variables:\n"
                "    OLD_VAR: c  # sunset: ignore[t-variable] until=2026-01-31 expired already\n"
                "# sunset: ignore[t-template] wrong policy for the next line\n"
                "l: {variables: {OLD_VAR: d}}\n"
                "# sunset: ignore[t-variable]\n"
            )
        },
    )
    report = scan([tmp_path], test_policies, ScanOptions(Version(19, 0), today=date(2026, 11, 22)))
    assert where(report) == {("t-variable", ".gitlab-ci.yml", 9, 5), ("t-variable", ".gitlab-ci.yml", 11, 17)}
    expired = [f for f in report.findings if f.location.line == 9][0]
    assert expired.message.endswith("(the suppression on line 9 expired on 2026-01-31)")
    assert report.suppressed == 2
    assert report.errors == []
    assert report.warnings == [  # suppressions that suppress nothing: warnings, not errors
        InputError(".gitlab-ci.yml", 10, "unused suppression: no `t-template` finding on this line or the next"),
        InputError(".gitlab-ci.yml", 12, "unused suppression: no `t-variable` finding on this line or the next"),
    ]


def test_unused_suppressions_are_warnings_through_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, {".gitlab-ci.yml": "variables:\n  # sunset: ignore[t-variable]\n  OLD_VAR: a\n"
                                       "  NEW_VAR: b  # sunset: ignore[t-variable,t-template] old habits\n"})
    args = ["scan", str(tmp_path), "--policies", str(DATA), "--color", "never"]
    assert main(args) == 0  # the one finding is suppressed; warnings do not fail the run
    assert capsys.readouterr().out == (
        "Warnings:\n"
        "  .gitlab-ci.yml:4: unused suppression: no `t-template` finding on this line or the next\n"
        "  .gitlab-ci.yml:4: unused suppression: no `t-variable` finding on this line or the next\n"
        "\n"
        "Scanned 1 file for GitLab 20.0: 0 error(s), 0 warning(s), 0 info; 0 input error(s); 1 suppressed, "
        "0 baselined.\n"
    )
    assert main([*args, "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["warnings"][0], data["summary"]["warnings"]) == (
        {"path": ".gitlab-ci.yml", "line": 4,
         "message": "unused suppression: no `t-template` finding on this line or the next"}, 2)


def test_baseline_reports_only_new_findings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = write(tmp_path / "repo", {".gitlab-ci.yml": "variables:\n  OLD_VAR: a\n"})
    baseline = tmp_path / "baseline.json"
    args = ["scan", str(repo), "--policies", str(DATA), "--format", "json"]
    assert main([*args, "--write-baseline", str(baseline), "--fail-on", "never"]) == 0
    recorded = json.loads(baseline.read_text())
    assert [(i["rule_id"], i["path"]) for i in recorded["findings"]] == [("t-variable", ".gitlab-ci.yml")]
    capsys.readouterr()
    # the old finding moves down a line; a new one appears
    (repo / ".gitlab-ci.yml").write_text("# moved\nvariables:\n  OLD_VAR: a\nj:\n  variables: {OLD_VAR: b}\n")
    assert main([*args, "--baseline", str(baseline)]) == 1
    data = json.loads(capsys.readouterr().out)
    assert [(f["rule_id"], f["line"]) for f in data["findings"]] == [("t-variable", 5)]
    assert data["summary"]["baselined"] == 1


def test_config_file(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    repo = write(
        tmp_path / "repo",
        {
            ".gitlab-ci.yml": "include:\n  - template: Old.gitlab-ci.yml\nvariables:\n  OLD_VAR: a\n",
            "vendor/.gitlab-ci.yml": "variables:\n  OLD_VAR: vendored\n",
            ".sunset.yml": (
                "target: '16.0'\n"
                "fail_on: error\n"
                "policies:\n  ignore: [t-reach]\n"
                "severity:\n  t-variable: info\n"
                "exclude: ['vendor/**']\n"
            ),
        },
    )
    monkeypatch.chdir(repo)
    assert main(["scan", ".", "--policies", str(DATA), "--format", "json"]) == 0  # nothing is an error at 16.0
    data = json.loads(capsys.readouterr().out)
    assert data["target"] == "16.0"
    assert [(f["rule_id"], f["severity"], f["path"]) for f in data["findings"]] == [
        ("t-template", "warning", ".gitlab-ci.yml"),
        ("t-variable", "info", ".gitlab-ci.yml"),
    ]
    assert main(["scan", ".", "--policies", str(DATA), "--target", "17.0", "--format", "json"]) == 1  # flag wins
    capsys.readouterr()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("target: seventeen\n", "1: target: String should match pattern"),
        ("fail_on: sometimes\n", "1: fail_on: Input should be 'error', 'warning', 'info' or 'never'"),
        ("policies:\n  ignore: [t-variable]\n  colour: red\n", "3: policies.colour: Extra inputs are not permitted"),
        (
            "policies:\n  select:\n    - t-variable\n    - t-typo\n",
            "4: policies.select: 't-typo' is no policy id, id prefix or group (groups: agent, api, ci, other, "
            "runner, security, settings); see `sunset policies list`",
        ),
        ("- a list\n", "1: the configuration must be a mapping"),
        ("target: [\n", "2: invalid YAML"),
    ],
)
def test_bad_config_is_exit_2_with_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    repo = write(tmp_path / "repo", {".gitlab-ci.yml": "j: {script: [x]}\n", "bad.yml": text})
    assert main(["scan", str(repo), "--policies", str(DATA), "--config", str(repo / "bad.yml")]) == 2
    assert capsys.readouterr().err.startswith(f"sunset: {repo / 'bad.yml'}:{message}")


def test_a_suppression_is_a_comment_never_text_that_shows_one(tmp_path: Path, test_policies: list[Policy]) -> None:
    """Examples of the grammar in a docstring, a string or a quoted YAML value are neither suppressions
    nor malformed ones; the real comments in the same files still are."""
    write(tmp_path, {
        "tools/suppressions.py": (
            '"""Write `# sunset: ignore[policy-id] reason` above the line:\n'
            "\n"
            "    # sunset: ignore[policy-id] until=2027-01-01 moving soon\n"
            "    # sunset: ignore t-variable (malformed, but only an example)\n"
            '"""\n'
            'EXAMPLE = "# sunset: ignore[no-such-policy] in a string"\n'
            "BAD = '# sunset: ignore[T-Variable]'  # sunset: ignore[no-such-policy] a real comment\n"
        ),
        ".gitlab-ci.yml": (
            "variables:\n"
            '  NOTE: "# sunset: ignore[no-such-policy] quoted"\n'
            "  OTHER: 'see # sunset: ignore[T-Variable]'\n"
            "  OLD_VAR: a  # sunset: ignore[t-variable] a real comment\n"
            "j:\n"
            "  script:\n"
            "    - echo \"# sunset: disable[t-variable]\"\n"
            "    - |\n"
            "      # sunset: ignore[t-template] a shell comment inside a block scalar is a comment\n"
            "      echo done\n"
        ),
    })
    report = scan([tmp_path], test_policies, ScanOptions(Version(19, 0)))
    assert report.errors == [
        InputError("tools/suppressions.py", 7, "suppression names unknown policy 'no-such-policy'")]
    assert (where(report), report.suppressed) == (set(), 1)
    assert report.warnings == [
        InputError(".gitlab-ci.yml", 9, "unused suppression: no `t-template` finding on this line or the next")]


@given(st.text())
def test_no_string_literal_is_a_suppression(value: str) -> None:
    """Whatever a Python string, a YAML double-quoted or single-quoted value holds, it is not a comment."""
    python = f"x = {value!r}\ny = [{value!r}, {ascii(value)}]\n"
    assert Suppressions.scan(python, KNOWN, "python-source") == Suppressions({}, [])
    yaml_double = json.dumps(value)  # escapes quotes, backslashes and line breaks
    yaml_single = "'" + value.replace("'", "''") + "'"
    for quoted in (yaml_double, yaml_single):
        if "\n" in quoted or "\r" in quoted or any(c in quoted for c in "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"):
            continue  # a line break in a single-quoted value: that is the next line's text
        assert Suppressions.scan(f"variables:\n  NOTE: {quoted}\n", KNOWN, "gitlab-ci") == Suppressions({}, [])


@given(st.text())
def test_comment_column_points_at_a_hash(line: str) -> None:
    column = comment_column(line)
    assert column is None or (line[column] == "#" and (column == 0 or line[column - 1] in " \t"))
