"""The scan `sunset fix` runs: the same scan as `sunset scan`, keeping for each reported finding
whose policy declares a fix what the parser recorded for it (the hit's route and span, and the
parsed document).

`sunset scan` keeps no documents once checked; this scan keeps only those with a fixable finding.
It runs the engine's `Scan` with an observer that keeps the hit and document behind each
finding reported, so suppressions and the baseline apply exactly as in a scan.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from scanner.core.document import Document
from scanner.core.files import scan_base
from scanner.core.results import Finding, Report
from scanner.engine.scan import Scan, ScanOptions
from scanner.rules.hits import Hit
from scanner.rules.policy import Policy


@dataclass(frozen=True, slots=True)
class Site:
    """A reported finding and what the parser recorded for it."""

    finding: Finding
    hit: Hit
    doc: Document


def collect(paths: list[Path], policies: list[Policy], options: ScanOptions) -> tuple[Report, list[Site]]:
    """Scan like `sunset scan`; return the report and the sites of findings whose policy has a fix."""
    wanted = frozenset(p.id for p in policies if p.data.fix)
    sites: list[Site] = []

    def keep(finding: Finding, hit: Hit, doc: Document) -> None:
        if hit.policy.id in wanted:
            sites.append(Site(finding, hit, doc))

    report = Scan(policies, options, scan_base(paths), observer=keep).run(paths)
    return report, sites
