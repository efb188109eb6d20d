"""Which project did a job token access? Correlate GitLab's job-token login with what follows.

`user_authenticated_using_job_token` names the job's own project (A) but not the project the token
was used on. The request that authenticated is usually audited too, on the accessed project (B),
with the same author and IP address, within a few seconds: that pair is an *access* A → B,
forwarded to B's project state (`streams.allowlist`). Deliveries may arrive in any order, so an
event on B also waits (briefly, bounded) for a login that arrives after it.

State: one user's value (`streams.massdownload.new_actor()`), next to the mass-download fields.
Windows run on event time (`created_at`), never on arrival time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from streams.events import ACCESS
from streams.settings import DetectorSettings

Access = dict[str, Any]
KEEP = 256  # logins and waiting events remembered per user, at most
PRUNE_AT = 16  # expired waiting events are skipped on read; the list is pruned past this length
NONE: list[Access] = []  # the usual answer, shared: callers only read it


def on_job_token_auth(value: dict[str, Any], event: dict[str, Any], limits: DetectorSettings) -> list[Access]:
    """Remember a login; claim the events on other projects that arrived before it."""
    ts, ip, origin, window = event["ts"], event["ip_address"], event["entity_path"], limits.correlation_window
    login = [ts, ip, origin, event.get("entity_id")]
    auths = value["auths"]
    if auths and auths[0][0] < ts - 2 * window:
        auths = [a for a in auths if a[0] >= ts - 2 * window]
    auths.append(login)
    value["auths"] = auths[-KEEP:]
    accesses, waiting = [], []
    for item in value["pending"]:
        if item[1] == ip and 0 <= item[0] - ts <= window:
            if item[2] != origin:
                accesses.append(_access(login, item, event))
        elif item[0] >= ts - 2 * window:
            waiting.append(item)
    value["pending"] = waiting
    return accesses


def on_project_event(value: dict[str, Any], event: dict[str, Any], limits: DetectorSettings) -> list[Access]:
    """An event on a project: an access by the latest login from the same IP within the window.

    This runs for nearly every event, so it does the least it can: a login scan only when the
    user has logins, and pruning of the waiting list only once it has grown past PRUNE_AT.
    """
    ts, ip = event["ts"], event["ip_address"]
    item = (ts, ip, event["entity_path"], event["entity_id"], event["id"], event["event_type"])
    auths = value["auths"]
    if auths:
        window = limits.correlation_window
        best = None
        for login in auths:
            if login[1] == ip and 0 <= ts - login[0] <= window and (best is None or login[0] >= best[0]):
                best = login
        if best is not None:
            return [_access(best, item, event)] if best[2] != item[2] else []
    pending = value["pending"]
    pending.append(item)
    if len(pending) > PRUNE_AT:
        cutoff = max(p[0] for p in pending) - 2 * limits.correlation_window
        value["pending"] = [p for p in pending if p[0] >= cutoff][-KEEP:]
    return NONE


def _access(login: list[Any], item: Sequence[Any], event: dict[str, Any]) -> Access:
    """An access record for the accessed project's stage; its id dedups repeated deliveries."""
    ts, _ip, project, project_id, event_id, via = item
    return {
        "event_type": ACCESS,
        "id": None if event_id is None else f"access:{event_id}",
        "ts": ts,
        "entity_path": project,
        "pkey": project,
        "entity_id": project_id,
        "origin": login[2],
        "origin_id": login[3],
        "user": {"id": event["author_id"], "name": event.get("author_name")},
        "evidence": "audit_correlation",
        "via": via,
    }
