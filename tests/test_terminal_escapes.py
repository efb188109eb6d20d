"""Terminal escapes from scanned files (a file name, a source line, an error) never reach the
terminal raw in the text format: they are shown as `\\x1b`, `\\u202e`. JSON and SARIF keep the
text as it is; JSON's own escaping applies there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scanner.cli import main
from scanner.core.redact import visible

ESC_DIR = "evil\x1b]0;owned\x07"
LINE = 'curl -s --request PUT --data "active=false" "$CI_API_V4_URL/runners/4" # \x1b[2J\u202eesrever\x9b'


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    folder = tmp_path / ESC_DIR
    folder.mkdir()
    (folder / "rotate.sh").write_text(f"#!/bin/sh\n{LINE}\n", encoding="utf-8")
    (tmp_path / "bad\u202e").mkdir()
    (tmp_path / "bad\u202e" / ".gitlab-ci.yml").write_text("job:\n  script: [\x1b\n", encoding="utf-8")
    return tmp_path


def _raw(text: str) -> list[str]:
    return [ch for ch in text if ch not in "\n" and (ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0 or ch == "\u202e")]


def test_text_output_shows_escapes(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["scan", str(tree), "--format", "text", "--fail-on", "never", "--color", "never"])
    out = capsys.readouterr().out
    assert _raw(out) == []
    assert "evil\\x1b]0;owned\\x07/rotate.sh:2:" in out
    assert "# \\x1b[2J\\u202eesrever\\x9b" in out
    assert "bad\\u202e/.gitlab-ci.yml: invalid YAML" in out


def test_markdown_output_has_no_raw_escapes(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["scan", str(tree), "--format", "markdown", "--fail-on", "never"])
    assert _raw(capsys.readouterr().out) == []


def test_json_keeps_the_text(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["scan", str(tree), "--format", "json", "--fail-on", "never"])
    report = json.loads(capsys.readouterr().out)
    [finding] = [f for f in report["findings"] if f["path"].startswith("evil")]
    assert finding["path"] == f"{ESC_DIR}/rotate.sh" and finding["snippet"].endswith("\u202eesrever\x9b")


def test_visible() -> None:
    assert visible("plain text, é ü 🙂") == "plain text, é ü 🙂"
    assert visible("a\x1bb\x00c\x7fd\u2066e\u200bf") == "a\\x1bb\\x00c\\x7fd\\u2066e\\u200bf"



def caret_tree(root: Path) -> Path:
    (root / ".gitlab-ci.yml").write_text(
        "job:\n  script:\n    - DB_PASS=secret1word gitlab-runner register --registration-token abc --url x\n")
    (root / "register.sh").write_text('#!/bin/sh\nprintf "\x1b[0m"; gitlab-runner register --registration-token def\n')
    return root


def test_the_caret_stays_under_the_match_when_values_are_masked_or_escaped(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["scan", str(caret_tree(tmp_path)), "--fail-on", "never", "--color", "never"])
    lines = capsys.readouterr().out.splitlines()
    assert [line for line in lines if line.startswith(("    2 |", "    3 |", "      | "))] == [
        "    3 |     - DB_PASS=**** gitlab-runner register --registration-token **** --url x",
        "      |                                           ^^^^^^^^^^^^^^^^^^^^",
        '    2 | printf "\\x1b[0m"; gitlab-runner register --registration-token ****',
        "      |                                          ^^^^^^^^^^^^^^^^^^^^"]


def test_sarif_region_snippet_is_the_match_and_json_columns_are_the_files(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    caret_tree(tmp_path)
    main(["scan", str(tmp_path), "--format", "sarif", "--fail-on", "never"])
    results = json.loads(capsys.readouterr().out)["runs"][0]["results"]
    regions = [r["locations"][0]["physicalLocation"]["region"] for r in results]
    assert [(g["startLine"], g["startColumn"], g["snippet"]["text"]) for g in regions] == [
        (3, 50, "--registration-token"), (2, 39, "--registration-token")]
    main(["scan", str(tmp_path), "--format", "json", "--fail-on", "never"])
    found = [(f["path"], f["line"], f["column"]) for f in json.loads(capsys.readouterr().out)["findings"]]
    assert found == [(".gitlab-ci.yml", 3, 50), ("register.sh", 2, 39)]
