"""`sunset stream replay --format text`: the replay document for a person at a terminal.

The JSON document (`streams.replay.write_json`) is the contract; this is a reading of it: the
counts, the download totals across the 17.0 split, every finding on one line, the dead letters.
"""

from __future__ import annotations

from typing import IO, Any

from streams.events import DOWNLOAD, PUBLIC_DOWNLOAD


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
        out.write(f"  {finding['kind']}: {_describe(finding)}\n")
    if doc["dead_letters"]:
        out.write(f"\nDead letters ({len(doc['dead_letters'])}):\n")
        for dead in doc["dead_letters"]:
            out.write(f"  line {dead['line']}: {dead['reason']}\n")


def _n(count: int, word: str, plural: str | None = None) -> str:
    return f"{count} {word if count == 1 else plural or word + 's'}"


def _user(user: dict[str, Any] | None) -> str:
    return "no user (authentication log)" if not user else f"{user.get('name') or 'user'} ({user.get('id')})"


def _describe(f: dict[str, Any]) -> str:
    if f["kind"] == "mass_download":
        window = f["window"]
        return (f"{_user(f['user'])} downloaded {f['projects']} projects (limit {f['limit']}) between "
                f"{window['start']} and {window['end']}")
    if f["kind"] == "job_token_allowlist_gap":
        status = {"open": "open", "resolved": f"resolved at {f['resolved_at']}",
                  "withdrawn": f"withdrawn at {f['resolved_at']}"}[f["status"]]
        return (f"{f['source_project']} -> {f['target_project']}, {_n(f['count'], 'access', 'accesses')} "
                f"{f['first_seen']} to {f['last_seen']} by {_user(f['user'])}; {status}; allowlist "
                f"{f['allowlist']}")
    return f"{f['project']} downloaded as {f['first_type']}, then as {f['then_type']} at {f['at']}"
