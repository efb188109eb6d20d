"""The format table: its names, the CLI's choices, and each renderer's bytes for one tiny report."""

from __future__ import annotations

import json

import pytest

from scanner.cli import build_parser
from scanner.core.results import Finding, InputError, Location, Report
from scanner.report import codequality, markdown, sarif
from scanner.report.formats import FORMATS
from scanner.report.jsonfmt import report_dict
from scanner.report.options import RenderOptions

CI = {"CI_PROJECT_URL": "https://gitlab.example.com/g/app", "CI_COMMIT_SHA": "0123abc"}
TEXT = (
    "ci/a.yml:2:3: warning[some-rule] `x` is deprecated\n"
    "    2 |   image: x\n"
    "      |   ^\n"
    "      = fix: use y\n"
    "      = docs: https://docs.example/x\n"
    "\n"
    "Input errors:\n"
    "  ci/b.yml:1: bad\n"
    "\n"
    "Scanned 2 files for GitLab 18.0: 0 error(s), 1 warning(s), 0 info; 1 input error(s); 0 suppressed, 0 baselined.\n"
)


def _tiny() -> Report:
    loc = Location("ci/a.yml", 2, 3, 2, 4, "job.image", "  image: x")
    finding = Finding(
        "some-rule", "Some rule", "warning", "`x` is deprecated", loc, "17.0", None, "use y", "https://docs.example/x",
        "x", "f" * 32,
    )
    return Report(target="18.0", findings=[finding], errors=[InputError("ci/b.yml", 1, "bad")], files_scanned=2)


def _dumps(doc: object) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def test_format_table_names_and_cli_choices() -> None:
    assert list(FORMATS) == ["text", "concise", "json", "sarif", "codequality", "markdown", "html"]
    parser = build_parser()
    assert [parser.parse_args(["scan", "--format", name]).format for name in FORMATS] == list(FORMATS)
    assert parser.parse_args(["scan"]).format == "text"
    with pytest.raises(SystemExit):
        parser.parse_args(["scan", "--format", "pdf"])


def test_each_format_renders_as_before() -> None:
    report, options = _tiny(), RenderOptions(env=CI)
    assert FORMATS["text"](report, options) == TEXT
    coloured = FORMATS["text"](report, RenderOptions(color=True))
    assert "\033[33mwarning\033[0m" in coloured and coloured.endswith(TEXT.splitlines()[-1] + "\n")
    assert FORMATS["json"](report, options) == _dumps(report_dict(report))
    assert FORMATS["sarif"](report, options) == _dumps(sarif.sarif_dict(report, []))
    assert FORMATS["codequality"](report, options) == _dumps(codequality.issues(report))
    body = FORMATS["markdown"](report, options)
    assert body == markdown.render_json(report_dict(report), CI) and "/-/blob/0123abc/ci/a.yml#L2" in body
