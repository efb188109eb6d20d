"""`sunset stream replay --format text`: the replay document for a person at a terminal.

The JSON document (`streams.replay.write_json`) is the contract; this is a reading of it: the
counts, the download totals across the 17.0 split, every finding on one line, the dead letters.
"""

from __future__ import annotations

from typing import IO, Any

from streams.eventtypes import DOWNLOAD, PUBLIC_DOWNLOAD
from streams.findings import plural as _n
from streams.registry import REGISTRY


def write_text(doc: dict[str, Any], out: IO[str]) -> None:
    stats, downloads = doc["stats"], doc["downloads"]
    out.write(f"Replayed {_n(stats['lines'], 'line')}: {_n(stats['events'], 'event')} "
              f"({_n(stats['duplicates'], 'repeated delivery', 'repeated deliveries')} counted once, "
              f"{stats['ignored']} of types no detector reads), {_n(stats['dead_letters'], 'dead letter')}.\n")
    private = sum(d[DOWNLOAD] for d in downloads.values())
    public = sum(d[PUBLIC_DOWNLOAD] for d in downloads.values())
    out.write(f"Downloads: {private + public} in {_n(len(downloads), 'project')} "
              f"({DOWNLOAD} {private}, {PUBLIC_DOWNLOAD} {public}).\n")
    findings = doc["findings"]
    out.write(f"\nFindings ({len(findings)}):\n" if findings else "\nNo findings.\n")
    for finding in findings:
        out.write(f"  {finding['kind']}: {REGISTRY.finding(finding).describe()}\n")
    if doc["dead_letters"]:
        out.write(f"\nDead letters ({len(doc['dead_letters'])}):\n")
        for dead in doc["dead_letters"]:
            out.write(f"  line {dead['line']}: {dead['reason']}\n")
