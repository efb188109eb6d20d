"""docs/record-coverage.md names only policies that exist, and every row says what covers it."""

from __future__ import annotations

import re
from pathlib import Path

from scanner.rules.catalog import builtin_policy_dir, load_policies

DOC = Path(__file__).resolve().parent.parent / "docs" / "record-coverage.md"
LINK = re.compile(r"\]\(policies/([a-z0-9-]+)\.md\)")


def _rows() -> list[list[str]]:
    rows = []
    for line in DOC.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and not set(line) <= set("|-: ") and cells[0] not in ("Summary row", "Release"):
            rows.append(cells)
    return rows


def test_every_policy_named_in_the_coverage_table_exists() -> None:
    ids = {p.id for p in load_policies([builtin_policy_dir()])}
    named = set(LINK.findall(DOC.read_text(encoding="utf-8")))
    assert named, "the table links no policy"
    assert sorted(named - ids) == []


def test_every_row_names_a_policy_or_says_why_not() -> None:
    for cells in _rows():
        text = " | ".join(cells)
        assert LINK.search(text) or "Not detectable" in text or "Not in the repository" in text or (
            "Not covered" in text
        ), f"row without a policy or a reason: {text}"


def test_every_api_policy_appears_in_the_table() -> None:
    """Every API policy is mapped: in this table, or (those written from GitLab's own pages since)
    in docs/gitlab-record.md, whose test checks the rest."""
    from scanner.report.record import load_record

    api = {p.id for p in load_policies([builtin_policy_dir()]) if p.source.parent.name == "api"}
    named = set(LINK.findall(DOC.read_text(encoding="utf-8")))
    named |= {pid for entry in load_record()[1] for pid in entry.policies}
    assert sorted(api - named) == []
