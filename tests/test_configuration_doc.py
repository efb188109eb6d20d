"""docs/configuration.md's examples, taken from the page itself and run."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

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
