"""docs/configuration.md's examples, taken from the page itself and run."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

import pytest

from scanner.cli import main
from scanner.core.versions import Version
from scanner.engine.scan import ScanOptions, scan
from scanner.rules.policy import Policy

from conftest import ROOT, where

DOC = ROOT / "docs" / "configuration.md"


def example(section: str, lang: str) -> str:
    """The first fenced `lang` block under the heading `section`."""
    text = DOC.read_text(encoding="utf-8")
    body = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    found = re.search(rf"```{lang}\n(.*?)```", body, re.S)
    assert found, f"no {lang} example under {section!r}"
    return found.group(1)


def test_the_suppression_example(tmp_path: Path, policies: list[Policy]) -> None:
    (tmp_path / ".gitlab-ci.yml").write_text(example("Inline suppressions", "yaml"), encoding="utf-8")
    before = scan([tmp_path], policies, ScanOptions(Version(18, 0), today=date(2027, 3, 1)))
    assert (where(before), before.suppressed, before.errors, before.warnings) == (set(), 2, [], [])
    after = scan([tmp_path], policies, ScanOptions(Version(18, 0), today=date(2027, 3, 2)))
    assert where(after) == {("ci-job-jwt-variables", ".gitlab-ci.yml", 7, 38)}
    assert after.findings[0].message.endswith("(the suppression on line 7 expired on 2027-03-01)")
    assert after.suppressed == 1


def console(section: str) -> list[str]:
    """The output lines of the `console` block under `section` (the `$` line left out)."""
    return [line for line in example(section, "console").splitlines()[1:] if line != "..."]


def columns(line: str) -> list[str]:
    return re.split(r"\s{2,}", line.strip())


def test_the_configuration_file_examples(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".sunset.yml").write_text(example("The configuration file", "yaml"), encoding="utf-8")
    (tmp_path / ".sunset-baseline.json").write_text('{"version": 1, "findings": []}\n', encoding="utf-8")
    (tmp_path / "ci").mkdir()
    monkeypatch.chdir(tmp_path / "ci")  # found in the parent; its baseline is read from its own folder
    assert main(["scan", "--show-settings"]) == 0
    rows = {columns(line)[0]: columns(line)[1:] for line in capsys.readouterr().out.splitlines()[2:]}
    config = str(tmp_path / ".sunset.yml")  # above the working directory: shown absolute
    assert rows["target"] == ["18.0", f"({config}:2)"] and rows["fail_on"] == ["error", f"({config}:3)"]
    assert rows["select"] == ["ci, runner", f"({config}:5)"] and rows["ignore"] == ["graphql", f"({config}:6)"]
    assert rows["kinds"] == ["deploy/*.yaml: helm-values", f"({config}:12)"]
    assert rows["baseline"] == [".sunset-baseline.json", f"({config}:10)"]
    (tmp_path / ".sunset.yml").unlink()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text(example("The configuration file", "toml"), encoding="utf-8")
    assert main(["scan", "--show-settings", "--fail-on", "error"]) == 0
    shown = capsys.readouterr().out.splitlines()
    documented = console("`--show-settings`")
    assert shown[:2] == documented[:2]
    rows = {columns(line)[0]: columns(line) for line in shown[2:]}
    for line in documented[2:]:
        if not line.startswith("policies "):  # the catalog's size changes as policies are added
            assert rows[columns(line)[0]] == columns(line)


def test_the_show_files_example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                capsys: pytest.CaptureFixture[str]) -> None:
    files = {".git/HEAD": "ref: refs/heads/main\n",
             ".gitlab-ci.yml": "include:\n  - template: Jobs/Build.gitlab-ci.yml\n"
             "  - local: ci/*.yml\n", "ci/build.yml": "build:\n  script: [make]\n", "README.md": "# x\n",
             "scripts/register.sh": "#!/bin/sh\ngitlab-runner register --token \"$T\"\n",
             "vendor/.gitlab-ci.yml": "j:\n  script: [x]\n"}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["scan", "--show-files", ".", "--exclude", "vendor/"]) == 0
    assert capsys.readouterr().out.splitlines() == console("`--show-files`")
