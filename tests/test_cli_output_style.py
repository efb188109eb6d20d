"""Output as users expect it (issue 15): `--format concise`, `--statistics`, the `[*]` fixable marker and
`fixable`/`fix_tier` in JSON, a policy's history sentence once, snippets clipped around the column,
and NO_COLOR / FORCE_COLOR / TERM=dumb."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scanner.report.text import clip

from conftest import sunset

WORKFLOW = "include:\n  - template: Jobs/Code-Quality.gitlab-ci.yml\n"
COMMENT = "# " + "the crawler waited this long for an element before moving on; " * 3
CI = WORKFLOW + f"dast:\n  variables:\n    DAST_CRAWL_SEARCH_ELEMENT_TIMEOUT: 10s  {COMMENT}\n  script: [x]\n"
WF_MESSAGE = ("Template `Jobs/Code-Quality.gitlab-ci.yml` runs CodeClimate-based Code Quality, which GitLab deprecated "
              "and will stop scanning; import a tool's own report instead.")
NOTE = ("First announced for 18.0. GitLab 18.0: end of CodeClimate-based scanning postponed to 19.0. GitLab 19.0: "
        "removal pending: GitLab took it out of its milestone and is reassessing it (Pending changes).")
DAST_MESSAGE = "`DAST_CRAWL_SEARCH_ELEMENT_TIMEOUT` was removed in GitLab 18.0 and has no effect."
SUMMARY = ("Scanned 2 files for GitLab 20.0: 1 error(s), 2 warning(s), 0 info; 0 input error(s); 0 suppressed, "
           "0 baselined. 1 fixable with `sunset fix` [*].\n")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / ".gitlab-ci.yml").write_text(CI, encoding="utf-8")
    (tmp_path / "other.gitlab-ci.yml").write_text(WORKFLOW, encoding="utf-8")
    return tmp_path


def test_concise_is_one_line_per_finding(repo: Path) -> None:
    done = sunset("scan", ".", "--format", "concise", cwd=repo)
    assert done.stdout == (
        f".gitlab-ci.yml:2:15: warning[code-quality-codeclimate-templates] {WF_MESSAGE} {NOTE}\n"
        f".gitlab-ci.yml:5:5: error[dast-crawl-element-timeout-variables] [*] {DAST_MESSAGE}\n"
        f"other.gitlab-ci.yml:2:15: warning[code-quality-codeclimate-templates] {WF_MESSAGE} {NOTE}\n"
        + SUMMARY
    )


def test_statistics(repo: Path) -> None:
    done = sunset("scan", ".", "--statistics", cwd=repo)
    assert (done.returncode, done.stdout) == (1, (
        "2  code-quality-codeclimate-templates         CodeClimate-based Code Quality template stops scanning\n"
        "1  dast-crawl-element-timeout-variables  [*]  DAST element timeout variables were removed\n"))


def test_json_says_what_sunset_fix_rewrites(repo: Path) -> None:
    findings = json.loads(sunset("scan", ".", "--format", "json", cwd=repo).stdout)["findings"]
    assert [(f["rule_id"], f["line"], f["fixable"], f["fix_tier"]) for f in findings] == [
        ("code-quality-codeclimate-templates", 2, False, None),
        ("dast-crawl-element-timeout-variables", 5, True, "safe"),
        ("code-quality-codeclimate-templates", 2, False, None),
    ]
    assert findings[0]["message"] == f"{WF_MESSAGE} {NOTE}"  # the contract keeps the whole message


def test_text_history_once_marker_and_clipped_snippet(repo: Path) -> None:
    text = sunset("scan", ".", "--color", "never", cwd=repo, env={"COLUMNS": "120"}).stdout
    snippet = f"    DAST_CRAWL_SEARCH_ELEMENT_TIMEOUT: 10s  {COMMENT}"
    shown = snippet[: 120 - 8 - 1] + "…"  # 120 columns (off a terminal, only when COLUMNS asks), gutter 8
    assert f"    5 | {snippet}\n" in sunset("scan", ".", "--color", "never", cwd=repo).stdout  # a pipe: whole lines
    assert text == (
        f".gitlab-ci.yml:2:15: warning[code-quality-codeclimate-templates] {WF_MESSAGE}\n"
        "    2 |   - template: Jobs/Code-Quality.gitlab-ci.yml\n"
        "      |               " + "^" * 31 + "\n"
        "      = fix: a linter job with artifacts: reports: codequality: gl-code-quality-report.json\n"
        "      = docs: https://docs.gitlab.com/update/deprecations/#codeclimate-based-code-quality-scanning-will-be-removed\n"
        f"      = note: {NOTE}\n"
        "\n"
        f".gitlab-ci.yml:5:5: error[dast-crawl-element-timeout-variables] [*] {DAST_MESSAGE}\n"
        f"    5 | {shown}\n"
        "      |     " + "^" * 33 + "\n"
        "      = docs: https://docs.gitlab.com/update/deprecations/#dast-dast_crawl_extract_element_timeout-and-"
        "dast_crawl_search_element_timeout-variables\n"
        "\n"
        f"other.gitlab-ci.yml:2:15: warning[code-quality-codeclimate-templates] {WF_MESSAGE}\n"
        "    2 |   - template: Jobs/Code-Quality.gitlab-ci.yml\n"
        "      |               " + "^" * 31 + "\n"
        "      = fix: a linter job with artifacts: reports: codequality: gl-code-quality-report.json\n"
        "      = docs: https://docs.gitlab.com/update/deprecations/#codeclimate-based-code-quality-scanning-will-be-removed\n"
        "\n" + SUMMARY
    )


def test_clip_keeps_the_column_in_view() -> None:
    line = "a" * 100 + "TARGET" + "b" * 100
    text, column, width = clip(line, 101, 6, 40)
    assert (len(text), text[column - 1 : column - 1 + width], text[0], text[-1]) == (40, "TARGET", "…", "…")
    assert clip("short", 2, 3, 40) == ("short", 2, 3)
    assert clip(line, 101, 6, 0) == (line, 101, 6)


def _on_a_terminal(repo: Path, **env: str) -> str:
    """The text report as a terminal receives it (a real pseudo-terminal)."""
    return sunset("scan", ".", cwd=repo, env=env, tty="stdout").stdout


def test_colour_follows_no_color_force_color_and_term(repo: Path) -> None:
    shown = _on_a_terminal(repo, TERM="xterm", COLUMNS="60")
    snippet = f"    DAST_CRAWL_SEARCH_ELEMENT_TIMEOUT: 10s  {COMMENT}"
    assert f"\x1b[2m    5 | \x1b[0m{snippet[:60 - 8 - 1]}…\r\n" in shown  # clipped to the terminal's 60 columns
    assert "\x1b[" not in _on_a_terminal(repo, TERM="dumb")
    assert "\x1b[" not in _on_a_terminal(repo, TERM="xterm", NO_COLOR="1")
    assert "\x1b[31merror\x1b[0m" in sunset("scan", ".", cwd=repo, env={"FORCE_COLOR": "1"}).stdout  # a pipe, forced
    assert "\x1b[" not in sunset("scan", ".", cwd=repo, env={"FORCE_COLOR": "1", "NO_COLOR": "1"}).stdout
    assert "\x1b[" not in sunset("scan", ".", "--color", "never", cwd=repo, env={"FORCE_COLOR": "1"}).stdout
    assert "\x1b[" in sunset("scan", ".", "--color", "always", cwd=repo, env={"NO_COLOR": "1"}).stdout
