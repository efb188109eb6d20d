"""Detector 1: download tallies per project across the 17.0 split, with duplicate deliveries dropped.

Since GitLab 17.0 `repository_download_operation` covers only private and internal projects and
the new, streaming-only `public_repository_download_operation` covers public ones: a dashboard
must add both. A project seen under both has changed visibility, which is worth a finding.

State: one project's value (`new_project()`), shared with `streams.allowlist`, so a project's
dedup record and counts are written in one changelog record; `streams.engine` keeps the values
in a mapping keyed by project path.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from streams.events import DOWNLOAD_TYPES, iso
from streams.settings import DetectorSettings

Finding = dict[str, Any]


def new_project() -> dict[str, Any]:
    """A project's whole state: one JSON value, one changelog record per write."""
    return {
        "downloads": dict.fromkeys(DOWNLOAD_TYPES, 0),
        "first_type": None,
        "visibility": None,
        "seen": {},
        "clock": 0.0,
        "allow": {"projects": {}, "groups": {}, "inbound": None, "source": None},
        "gaps": {},
    }


def remember(value: dict[str, Any], event_id: str, ts: float, limits: DetectorSettings) -> bool:
    """Record `event_id` in the project's bounded, expiring record; False if it was already there.

    Expiry runs on event time (the project's newest `created_at`), so a replay is deterministic;
    the record never holds more than `dedup_max` ids, oldest dropped first.
    """
    seen: dict[str, float] = value["seen"]
    if event_id in seen:
        return False
    seen[event_id] = ts
    clock = value["clock"]
    if ts > clock:
        value["clock"] = clock = ts
    # Prune in bulk (a rebuilt dict, not deletions from the front, which leave a CPython dict
    # slower to iterate), when it is over the cap or a quarter TTL has passed since the last time.
    if len(seen) > limits.dedup_max or clock - value.get("pruned", clock) > limits.dedup_ttl / 4:
        cutoff = clock - limits.dedup_ttl
        kept = [(k, t) for k, t in seen.items() if t >= cutoff]
        value["seen"] = dict(kept[-limits.dedup_max:])
        value["pruned"] = clock
    elif "pruned" not in value:
        value["pruned"] = clock
    return True


def count(value: dict[str, Any], event: dict[str, Any], limits: DetectorSettings) -> tuple[bool, list[Finding]]:
    """Count one download in its project's value; (counted, findings). A repeated id is not counted."""
    if not remember(value, event["id"], event["ts"], limits):
        return False, []
    kind = event["event_type"]
    value["downloads"][kind] += 1
    findings: list[Finding] = []
    first = value["first_type"]
    if first is None:
        value["first_type"] = kind
    elif first != kind and value["visibility"] is None:
        finding = value["visibility"] = visibility_changed(event["entity_path"], first, kind, event["ts"])
        findings.append(finding)
    return True, findings


def visibility_changed(project: str, before: str, after: str, ts: float) -> Finding:
    """Downloads of one project under both event types: its visibility changed (or it is pre-/post-17.0)."""
    return {
        "kind": "visibility_changed",
        "id": f"visibility_changed:{project}",
        "project": project,
        "first_type": before,
        "then_type": after,
        "at": iso(ts),
    }


def tallies(projects: Mapping[str, Any]) -> dict[str, dict[str, int]]:
    """Download counts per project path, sorted, both event types always present."""
    out = {}
    for key in sorted(projects):
        value = projects[key]
        if value and any(value["downloads"].values()):
            out[key] = dict(value["downloads"])
    return out
