"""Which project did a job token access? Correlate GitLab's job-token login with what follows.

`user_authenticated_using_job_token` names the job's own project (A) but not the project the token
was used on. The request that authenticated is usually audited too, on the accessed project (B),
with the same author and IP address, within a few seconds: that pair is an *access* A → B,
forwarded to B's project state (`streams.detectors.gaps`). Deliveries may arrive in any order, so an
event on B also waits (briefly, bounded) for a login that arrives after it.

State: the `auths` and `pending` keys of one user's value (actor stage), next to the mass-download
keys. Windows run on event time (`created_at`), never on arrival time. It raises no finding: it
returns access records, which the stage forwards to the accessed project's stage.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from streams.audit import ACCESS, JOB_TOKEN_AUTH
from streams.detectors.base import ANY, NONE, Base, Event, Handler, Result, Stage, State
from streams.settings import DetectorSettings

Access = dict[str, Any]
KEEP = 256  # logins and waiting events remembered per user, at most (trimmed to the newest half)
PRUNE_AT = 2  # the waiting list is not pruned below this length (the worker writes it whole at every flush)


def on_job_token_auth(value: dict[str, Any], event: dict[str, Any], limits: DetectorSettings) -> list[Access]:
    """Remember a login; claim the events on other projects that arrived before it."""
    ts, ip, origin, window = event["ts"], event["ip_address"], event["entity_path"], limits.correlation_window
    login = [ts, ip, origin, event.get("entity_id")]
    auths = value["auths"]
    auths.append(login)
    if auths[0][0] < ts - 3 * window or len(auths) >= KEEP:
        _prune(value, "auths", window)
    accesses, waiting = [], []
    for item in value["pending"]:
        if item[1] == ip and 0 <= item[0] - ts <= window:
            if item[2] != origin:
                accesses.append(_access(login, item, event))
        elif item[0] >= ts - 2 * window:
            waiting.append(item)
    value["pending"] = waiting
    return accesses


def on_project_event(value: dict[str, Any], event: dict[str, Any], limits: DetectorSettings) -> Sequence[Result]:
    """An event on a project: an access by the latest login from the same IP within the window.

    This runs for nearly every event, so it does the least it can: a login scan only when the
    user has logins, and a prune of the waiting list only once it is longer than PRUNE_AT and
    its oldest entry is three windows older than the newest (or it is full), so that a prune
    removes a window's worth at least.
    """
    ts, ip = event["ts"], event["ip_address"]
    if not ip or event["entity_path"] is None:  # normalize routes neither here; kept for direct callers
        return NONE
    auths = value["auths"]
    if auths:
        window = limits.correlation_window
        if auths[0][0] < ts - 3 * window:  # logins this old match nothing on time
            auths = value["auths"] = [login for login in auths if login[0] >= ts - 2 * window]
        best = None
        for login in auths:
            if login[1] == ip and 0 <= ts - login[0] <= window and (best is None or login[0] >= best[0]):
                best = login
        if best is not None:
            item = (ts, ip, event["entity_path"], event["entity_id"], event["id"], event["event_type"])
            return (_access(best, item, event),) if best[2] != item[2] else NONE
    pending = value["pending"]
    pending.append((ts, ip, event["entity_path"], event["entity_id"], event["id"], event["event_type"]))
    if len(pending) > PRUNE_AT and (pending[0][0] < ts - 3 * limits.correlation_window or len(pending) >= KEEP):
        _prune(value, "pending", limits.correlation_window)
    return NONE


def _prune(value: dict[str, Any], name: str, window: float) -> None:
    """Keep the entries of `value[name]` from two windows before its newest arrival on, at most KEEP/2.

    Entries past the window are never matched (every read checks the times), so keeping some a
    little longer changes no result, only the cost. The cut is relative to the newest *arrival*,
    not to the user's newest event time: a user's events may arrive far ahead of a login that a
    later-arriving event still needs.
    """
    entries: list[Any] = value[name]
    cutoff = entries[-1][0] - 2 * window
    value[name] = [entry for entry in entries if entry[0] >= cutoff][-KEEP // 2:]


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


def _login_check(event: Event) -> str | None:
    if event["ip_address"] is None or not (event["author_id"] or 0) > 0:
        return "job-token login without author_id or ip_address"
    return None


class JobTokenCorrelation(Base):
    name = "job_token_correlation"
    stage: Stage = "actor"
    reads = frozenset({JOB_TOKEN_AUTH, ANY})  # any project event may be the request a login authenticated
    checks = {JOB_TOKEN_AUTH: _login_check}
    settings = ("correlation_window",)

    def state(self) -> State:
        return {"auths": [], "pending": []}

    def on_event(self, state: State, event: Event, settings: DetectorSettings) -> Sequence[Result]:
        return self.handler(event["event_type"])(state, event, settings)

    def handler(self, kind: str) -> Handler:
        """The functions themselves: no frame or type test in between, they run for nearly every event."""
        return on_job_token_auth if kind == JOB_TOKEN_AUTH else on_project_event

    def active_since(self, state: State, cutoff: float) -> bool:
        """A login or a waiting event at or after `cutoff` (an event matched to a login at once
        leaves no trace, but is within a window of that login). The newest entries are looked at
        first; a full scan is rare."""
        for entries in (state["pending"], state["auths"]):
            if entries and (entries[-1][0] >= cutoff or any(entry[0] >= cutoff for entry in entries)):
                return True
        return False

    def horizon(self, settings: DetectorSettings) -> float:
        """It matches within one window and keeps a few."""
        return 4 * settings.correlation_window


JOB_TOKEN_CORRELATION = JobTokenCorrelation()
