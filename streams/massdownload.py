"""Detector 2: mass download — GitLab's Ultimate-only Git abuse rate limit, for any tier.

A user who downloads (archive, clone or fetch) more than N distinct projects within T seconds is
reported once per window, not once per event. Anonymous downloads (author_id -1, one shared id
for every unauthenticated user) are not attributed to anybody and never alert.

State: one user's value (`new_actor()`), shared with `streams.correlate`; `streams.engine` keeps
the values in a mapping keyed by author id. It is idempotent by construction — a project set
with its newest time — so a duplicate delivery changes nothing.
"""

from __future__ import annotations

from typing import Any

from streams.events import iso
from streams.settings import DetectorSettings

Finding = dict[str, Any]
NONE: list[Finding] = []  # the usual answer, shared: callers only read it


def new_actor() -> dict[str, Any]:
    """A user's state: recent downloads per project, alert suppression, recent job-token logins."""
    return {"name": None, "recent": {}, "clock": 0.0, "alerted_until": None, "alert": None, "auths": [], "pending": []}


def allowlisted(event: dict[str, Any], limits: DetectorSettings) -> bool:
    """Users never alerted, by id or by name."""
    allow = limits.mass_download_allowlist
    return bool(allow) and (str(event["author_id"]) in allow or event.get("author_name") in allow)


def record(value: dict[str, Any], event: dict[str, Any], limits: DetectorSettings) -> list[Finding]:
    """Record one download in its user's value; a finding when it takes them over the limit."""
    if limits.mass_download_allowlist and allowlisted(event, limits):
        return NONE
    ts, project = event["ts"], event["entity_path"]
    recent: dict[str, float] = value["recent"]
    if ts > recent.get(project, -1.0):
        recent[project] = ts
    clock = value["clock"]
    if ts > clock:
        value["clock"] = clock = ts
    findings = NONE
    if len(recent) > limits.mass_download_projects:
        cutoff = clock - limits.mass_download_window
        if value.get("oldest", -1.0) <= cutoff:  # something may have expired: prune (else all count)
            _prune(recent, cutoff, 4 * limits.mass_download_projects + 64)
            value["oldest"] = min(recent.values())
        until = value["alerted_until"]
        if len(recent) > limits.mass_download_projects and (until is None or ts >= until):
            value["alerted_until"] = ts + limits.mass_download_window
            value["name"] = event["author_name"] or value["name"]
            value["alert"] = _finding(event["author_id"], value, clock, limits)
            findings = [value["alert"]]
    return findings


def _prune(recent: dict[str, float], cutoff: float, cap: int) -> None:
    """Forget projects last downloaded at or before `cutoff`; keep at most `cap`, newest first."""
    for project in [p for p, ts in recent.items() if ts <= cutoff]:
        del recent[project]
    if len(recent) > cap:
        for project, _ in sorted(recent.items(), key=lambda item: item[1])[: len(recent) - cap]:
            del recent[project]


def _finding(user_id: int, value: dict[str, Any], clock: float, limits: DetectorSettings) -> Finding:
    recent: dict[str, float] = value["recent"]
    start = min(recent.values())
    return {
        "kind": "mass_download",
        "id": f"mass_download:{user_id}:{iso(start)}",
        "user": {"id": user_id, "name": value["name"]},
        "projects": len(recent),
        "project_paths": sorted(recent),
        "window": {"seconds": limits.mass_download_window, "start": iso(start), "end": iso(clock)},
        "limit": limits.mass_download_projects,
    }
