"""The scan `sunset fix` runs: the same scan as `sunset scan`, keeping for each reported finding
whose policy declares a fix what the parser recorded for it (the hit's route and span, and the
parsed document).

`sunset scan` keeps no documents once checked; this scan keeps only those with a fixable finding.
It reuses the engine's `Scan` and replaces its `Recorder` with one that also remembers the hit
behind each finding it reports, so suppressions and the baseline apply exactly as in a scan.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from scanner.discover import scan_base
from scanner.document import Document
from scanner.engine import Scan, ScanOptions
from scanner.findings import Recorder
from scanner.hits import Hit
from scanner.model import Finding, Location, Report
from scanner.policy import Policy


@dataclass(frozen=True, slots=True)
class Site:
    """A reported finding and what the parser recorded for it."""

    finding: Finding
    hit: Hit
    doc: Document


class _Capture(Recorder):
    """A `Recorder` that also keeps the hit and document of each finding it reports."""

    def __init__(self, base: Recorder, wanted: frozenset[str]) -> None:
        Recorder.__init__(self, base.report, base.rules, base.policy_ids)
        self.wanted = wanted
        self.sites: list[Site] = []
        self.doc: Document | None = None

    def record(self, doc: Document, hits: Iterable[Hit]) -> None:
        self.doc = doc
        Recorder.record(self, doc, hits)

    def finding(self, hit: Hit, loc: Location, print_: str, note: str) -> Finding:
        found = Recorder.finding(self, hit, loc, print_, note)
        if hit.policy.id in self.wanted and self.doc is not None:
            self.sites.append(Site(found, hit, self.doc))
        return found


class _FixScan(Scan):
    def __post_init__(self) -> None:
        Scan.__post_init__(self)
        self.capture = _Capture(self.recorder, frozenset(p.id for p in self.policies if p.data.fix))
        self.recorder = self.capture


def collect(paths: list[Path], policies: list[Policy], options: ScanOptions) -> tuple[Report, list[Site]]:
    """Scan like `sunset scan`; return the report and the sites of findings whose policy has a fix."""
    runner = _FixScan(policies, options, scan_base(paths))
    report = runner.run(paths)
    return report, runner.capture.sites
