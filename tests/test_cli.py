"""The command line: exit codes, formats, policy errors, the catalog and its generated docs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scanner.cli import main
from scanner.report import policydocs as docs
from scanner.rules.catalog import builtin_policy_dir, load_policies

from conftest import ROOT, sunset
from test_engine import DATA, write


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    return write(
        tmp_path / "repo",
        {
            ".gitlab-ci.yml": "include:\n  - template: Old.gitlab-ci.yml\nvariables:\n  OLD_VAR: x\n",
        },
    )


def test_exit_codes_follow_fail_on(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["scan", str(repo), "--policies", str(DATA), "--target", "17.0"]
    assert main(base + ["--fail-on", "error"]) == 1  # t-template removed in 17.0: error
    assert main(base + ["--fail-on", "never"]) == 0
    assert main(["scan", str(repo), "--policies", str(DATA), "--target", "16.0", "--fail-on", "error"]) == 0
    assert main(["scan", str(repo), "--policies", str(DATA), "--target", "16.0"]) == 1  # warnings, default threshold
    capsys.readouterr()


def test_input_errors_exit_1_even_without_findings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, {".gitlab-ci.yml": "a: [\n"})
    assert main(["scan", str(tmp_path), "--fail-on", "error"]) == 1  # input errors count as `error`
    assert ".gitlab-ci.yml:2: invalid YAML" in capsys.readouterr().out
    assert main(["scan", str(tmp_path), "--fail-on", "never"]) == 0  # never means never
    assert main(["scan", str(tmp_path), "--exit-zero"]) == 0


def test_bad_arguments_exit_2(repo: Path) -> None:
    result = sunset("scan", str(repo), "--target", "seventeen")
    assert result.returncode == 2
    assert result.stderr == "sunset: --target: not a GitLab release (MAJOR.MINOR): 'seventeen'\n"
    assert sunset("scan", "--format", "xml").returncode == 2


def test_broken_policy_names_file_line_and_field(tmp_path: Path, repo: Path) -> None:
    bad = tmp_path / "mine" / "ci"
    bad.mkdir(parents=True)
    original = (DATA / "ci" / "t-variable.yaml").read_text()
    text = original.replace('removed_in: "18.0"', 'removed_in: "eighteen"')
    (bad / "my-policy.yaml").write_text(text)
    result = sunset("scan", str(repo), "--policies", str(tmp_path / "mine"))
    assert result.returncode == 2
    assert result.stderr.startswith(f"sunset: {bad / 'my-policy.yaml'}:7: removed_in: String should match pattern")
    (bad / "my-policy.yaml").write_text(original.replace('removed_in: "18.0"', 'removed_in: "18.0"\ncolour: red'))
    result = sunset("scan", str(repo), "--policies", str(tmp_path / "mine"))
    assert result.stderr == f"sunset: {bad / 'my-policy.yaml'}:8: colour: Extra inputs are not permitted\n"
    (bad / "my-policy.yaml").write_text(original.replace("names: [OLD_VAR]", "names: [OLD_VAR]\n  path: $..x"))
    result = sunset("scan", str(repo), "--policies", str(tmp_path / "mine"))
    assert result.stderr == f"sunset: {bad / 'my-policy.yaml'}:15: match: path: Extra inputs are not permitted\n"


def test_jsonpath_recursive_descent_is_refused(tmp_path: Path, repo: Path) -> None:
    d = tmp_path / "p"
    d.mkdir()
    text = (DATA / "ci" / "t-jsonpath.yaml").read_text().replace("$.*.artifacts", "$..artifacts")
    (d / "slow.yaml").write_text(text)
    result = sunset("scan", str(repo), "--policies", str(d))
    assert result.returncode == 2
    assert "match: recursive descent ('..') is not allowed in policy JSONPath" in result.stderr


def test_duplicate_policy_id_is_refused(tmp_path: Path, repo: Path) -> None:
    d = tmp_path / "dup"
    d.mkdir()
    (d / "t-variable.yaml").write_text((DATA / "ci" / "t-variable.yaml").read_text())
    result = sunset("scan", str(repo), "--policies", str(DATA), "--policies", str(d))
    assert result.returncode == 2
    assert "id: duplicate policy id 't-variable'" in result.stderr


def test_json_contract(repo: Path) -> None:
    result = sunset("scan", str(repo), "--policies", str(DATA), "--format", "json", "--target", "17.0")
    data = json.loads(result.stdout)
    assert set(data) == {"version", "tool", "target", "findings", "errors", "warnings", "includes", "summary"}
    assert data["version"] == 1 and data["target"] == "17.0" and data["tool"]["name"] == "sunset"
    first = data["findings"][0]
    assert {k: first[k] for k in ("rule_id", "path", "line", "column", "end_line", "end_column", "severity")} == {
        "rule_id": "t-template",
        "path": ".gitlab-ci.yml",
        "line": 2,
        "column": 15,
        "end_line": 2,
        "end_column": 32,
        "severity": "error",
    }
    assert data["summary"] == {
        "files_scanned": 1,
        "findings": 2,
        "errors": 0,
        "warnings": 0,
        "suppressed": 0,
        "baselined": 0,
        "by_severity": {"error": 1, "warning": 1, "info": 0},
    }


def test_text_output_has_caret_fix_and_summary(repo: Path) -> None:
    result = sunset("scan", str(repo), "--policies", str(DATA), "--target", "17.0", "--color", "never")
    lines = result.stdout.splitlines()
    assert lines[0] == ".gitlab-ci.yml:2:15: error[t-template] test t-template matched Old.gitlab-ci.yml"
    assert lines[1] == "    2 |   - template: Old.gitlab-ci.yml"
    assert lines[2] == "      |               ^^^^^^^^^^^^^^^^^"
    assert lines[-1] == (
        "Scanned 1 file for GitLab 17.0: 1 error(s), 1 warning(s), 0 info; 0 input error(s); 0 suppressed, 0 baselined."
    )
    assert "\033[" not in result.stdout


def test_policies_list_and_show() -> None:
    listing = sunset("policies", "list").stdout
    assert "license-scanning-templates" in listing
    shown = sunset("policies", "show", "license-scanning-templates").stdout
    assert shown.startswith("# license-scanning-templates\n")
    assert sunset("policies", "show", "no-such-policy").returncode == 2


def test_committed_policy_docs_are_current() -> None:
    stale = docs.stale_docs(load_policies([builtin_policy_dir()]), ROOT / "docs" / "policies")
    assert stale == [], "regenerate with: sunset policies docs --out docs/policies"
