"""Detector 3: job-token allowlist gaps — accesses GitLab 18.0 will refuse.

18.0 enforces every project's inbound CI/CD job-token allowlist. An access to project B by
project A's job token (found by `streams.correlate`, or a row of B's job-token authentication
log) is a gap when A was on neither B's project list nor, through a parent group, its group
list at the access's `created_at` (`streams.allowlist`). One finding per (A, B) and refusal
episode: it is updated with a count and last_seen while the episode lasts, and reported once
more as `resolved` when A is added. A removal starts a new episode; its finding id ends in
`@<time of the removal>`. A gap judged on an unknown allowlist that a later-arriving change
shows was allowed after all (a removal of an entry never seen added) is reported `withdrawn`.

State: the `gaps` part of one project's value, keyed `<source>@<episode start>`.
"""

from __future__ import annotations

from typing import Any

from streams.allowlist import allowed_at, episode
from streams.downloads import remember
from streams.events import iso
from streams.settings import DetectorSettings

Finding = dict[str, Any]


def on_access(value: dict[str, Any], access: dict[str, Any], limits: DetectorSettings) -> tuple[bool, list[Finding]]:
    """An access A → B in B's value; (counted, findings). A repeated delivery (same id) is not counted."""
    target, origin, ts = access["entity_path"], access["origin"], access["ts"]
    if access["id"] is not None and not remember(value, access["id"], ts, limits):
        return False, []
    allow = value["allow"]
    if origin == target or allowed_at(allow, origin, access.get("origin_id"), ts):
        return True, []
    start, end = episode(allow, origin, access.get("origin_id"), ts)
    key = f"{origin}@{'' if start is None else iso(start)}"
    gap = value["gaps"].get(key)
    if gap is None:
        gap = value["gaps"][key] = _new(target, access, value, start)
    else:
        gap["count"] += 1
        if ts >= gap["last_ts"] and access.get("user"):
            gap["user"] = access["user"]
        gap["first_ts"], gap["last_ts"] = min(gap["first_ts"], ts), max(gap["last_ts"], ts)
        if access["evidence"] not in gap["evidence"]:
            gap["evidence"] = sorted([*gap["evidence"], access["evidence"]])
    gap["end"] = end
    return True, [finding(gap)]


def _new(target: str, access: dict[str, Any], value: dict[str, Any], start: float | None) -> dict[str, Any]:
    inbound = value["allow"]["inbound"]
    return {
        "source": access["origin"], "target": target, "start": start, "end": None, "withdrawn": False,
        "user": access.get("user"), "count": 1, "first_ts": access["ts"], "last_ts": access["ts"],
        "evidence": [access["evidence"]], "allowlist": value["allow"]["source"] or "unknown",
        "inbound_enabled": None if inbound is None else inbound[0],
    }


def recheck(value: dict[str, Any], ts: float, limits: DetectorSettings) -> list[Finding]:
    """After an allowlist change at `ts`: open gaps whose source has been let in since are resolved;
    those whose accesses turn out to have been allowed (the change arrived late and reveals the
    earlier state, e.g. a removal of an entry we never saw added) are withdrawn.

    Gaps that ended more than `dedup_ttl` before the project's newest event are forgotten (their
    final state was published): the state holds the open gaps and the recently ended ones, not
    every episode ever seen. An access delivered that late to an ended episode opens it again.
    """
    findings: list[Finding] = []
    allow, gaps = value["allow"], value["gaps"]
    cutoff = max(ts, value["clock"]) - limits.dedup_ttl
    for key in [k for k, gap in gaps.items() if gap["end"] is not None and gap["end"] < cutoff]:
        del gaps[key]
    for gap in gaps.values():
        if gap["end"] is not None:
            continue
        if allowed_at(allow, gap["source"], None, gap["last_ts"]):
            gap["end"], gap["withdrawn"] = ts, True
        else:
            gap["end"] = episode(allow, gap["source"], None, gap["last_ts"])[1]
        if gap["end"] is not None:
            findings.append(finding(gap))
    return findings


def finding(gap: dict[str, Any]) -> Finding:
    """The finding as published; `id` is stable across its updates."""
    suffix = "" if gap["start"] is None else f"@{iso(gap['start'])}"
    return {
        "kind": "job_token_allowlist_gap",
        "id": f"job_token_allowlist_gap:{gap['source']}>{gap['target']}{suffix}",
        "status": "open" if gap["end"] is None else "withdrawn" if gap["withdrawn"] else "resolved",
        "source_project": gap["source"],
        "target_project": gap["target"],
        "user": gap["user"],
        "count": gap["count"],
        "first_seen": iso(gap["first_ts"]),
        "last_seen": iso(gap["last_ts"]),
        "resolved_at": None if gap["end"] is None else iso(gap["end"]),
        "evidence": list(gap["evidence"]),
        "allowlist": gap["allowlist"],
        "inbound_enabled": gap["inbound_enabled"],
    }
