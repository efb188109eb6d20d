"""The two keyed stages every normalized event goes through, over state held in mappings.

* The project stage (key: project path) — download tallies, allowlists, gaps.
* The actor stage (key: author id) — mass downloads, job-token correlation; it emits *access*
  records that belong to the accessed project's stage.

The worker runs each stage on its own topic partitioned by that key, with a Faust Table behind
the mapping; `Engine` runs both in one process over dicts (the replay and the unit tests).
"""

from __future__ import annotations

from collections.abc import Iterable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from streams import allowlist, correlate, downloads, gaps, massdownload
from streams.events import ACCESS, ALLOWLIST_TYPES, AUTH_LOG, DOWNLOAD_TYPES, JOB_TOKEN_AUTH, SNAPSHOT
from streams.settings import DetectorSettings

Finding = dict[str, Any]
Access = dict[str, Any]


@dataclass(slots=True)
class StageResult:
    """What one event produced: findings to publish, accesses to forward, whether it was a duplicate."""

    findings: list[Finding] = field(default_factory=list)
    accesses: list[Access] = field(default_factory=list)
    duplicate: bool = False


NOTHING = StageResult()  # shared results: read them, never mutate them
DUPLICATE = StageResult(duplicate=True)


def project_stage(projects: MutableMapping[str, Any], event: dict[str, Any], limits: DetectorSettings) -> StageResult:
    """Apply one event (or access record) to its project's value; one read and one write."""
    key, kind = event["pkey"], event["event_type"]
    value = projects.get(key)
    if value is None:
        value = downloads.new_project()
    if kind in DOWNLOAD_TYPES:
        counted, findings = downloads.count(value, event, limits)
    elif kind in ALLOWLIST_TYPES or kind == SNAPSHOT:
        if kind == SNAPSHOT:
            allowlist.apply_snapshot(value["allow"], event)
        else:
            allowlist.apply_event(value["allow"], event)
        counted, findings = True, gaps.recheck(value, event["ts"], limits)
    elif kind in (ACCESS, AUTH_LOG):
        access = auth_log_access(event) if kind == AUTH_LOG else event
        counted, findings = gaps.on_access(value, access, limits)
    else:
        return NOTHING
    if not counted:
        return DUPLICATE  # nothing changed: no write
    projects[key] = value
    return StageResult(findings) if findings else NOTHING


def auth_log_access(record: dict[str, Any]) -> Access:
    """A row of the job-token authentication log is an access with no user attached."""
    return {"event_type": ACCESS, "id": record["id"], "ts": record["ts"], "entity_path": record["entity_path"],
            "pkey": record["entity_path"], "entity_id": None, "origin": record["origin"], "origin_id": None,
            "user": None, "evidence": "auth_log", "via": AUTH_LOG}


def actor_stage(actors: MutableMapping[str, Any], event: dict[str, Any], limits: DetectorSettings) -> StageResult:
    """Apply one event to its author's value; one read and one write."""
    key = event["akey"]
    value = actors.get(key)
    if value is None:
        value = massdownload.new_actor()
    findings = NOTHING.findings
    if event["event_type"] == JOB_TOKEN_AUTH:
        accesses = correlate.on_job_token_auth(value, event, limits)
    else:
        if event["download"]:
            findings = massdownload.record(value, event, limits)
        accesses = correlate.on_project_event(value, event, limits) if event["ip_address"] else NOTHING.accesses
    actors[key] = value
    return StageResult(findings, accesses) if findings or accesses else NOTHING


def actor_horizon(limits: DetectorSettings) -> float:
    """Event time after which an idle user's value can no longer change a result.

    Past it, every download it holds is out of the mass-download window (so is its alert
    suppression, which ends one window after an alert), and every login or waiting event is out
    of reach of the correlation (which matches within one window and keeps a few).
    """
    return max(limits.mass_download_window, 4 * limits.correlation_window)


def idle(value: dict[str, Any], cutoff: float) -> bool:
    """Whether a user's value records nothing at or after `cutoff`: no download, login or waiting
    event (an event matched to a login at once leaves no trace, but is within a correlation
    window of that login). The newest entries are looked at first; a full scan is rare."""
    if value["clock"] >= cutoff:
        return False
    for entries in (value["pending"], value["auths"]):
        if entries and (entries[-1][0] >= cutoff or any(entry[0] >= cutoff for entry in entries)):
            return False
    return True


def idle_actors(actors: Iterable[tuple[str, Any]], now: float, limits: DetectorSettings) -> list[str]:
    """The keys of (key, value) pairs whose user has been idle longer than the horizon at `now`.

    Dropping them keeps actor state proportional to *active* users, at no cost per event. It is
    exact for every event less than the horizon behind the newest one seen; an event delivered
    later than that, for a user dropped meanwhile, starts from an empty value (it is still
    counted, but not correlated with what was dropped).
    """
    cutoff = now - actor_horizon(limits)
    return [key for key, value in actors if idle(value, cutoff)]


class Engine:
    """Both stages over dicts, in one process: the offline replay and the unit tests."""

    def __init__(self, limits: DetectorSettings) -> None:
        self.limits = limits
        self.projects: dict[str, Any] = {}
        self.actors: dict[str, Any] = {}
        self.events = self.duplicates = self.ignored = self.expired = 0
        self.sweep_at = float("-inf")  # event time of the next sweep of idle users

    @property
    def stats(self) -> dict[str, int]:
        return {"events": self.events, "duplicates": self.duplicates, "ignored": self.ignored,
                "users_expired": self.expired}

    def sweep(self, now: float) -> None:
        """Forget users idle past the horizon; run once per horizon of event time (amortized O(1) an event)."""
        for key in idle_actors(self.actors.items(), now, self.limits):
            del self.actors[key]
            self.expired += 1
        self.sweep_at = now + actor_horizon(self.limits)

    def apply(self, event: dict[str, Any]) -> list[Finding]:
        """One normalized event through both stages; the findings it produced, in order."""
        self.events += 1
        p_key, a_key = event["pkey"], event["akey"]
        findings = NOTHING.findings
        if p_key is not None:
            result = project_stage(self.projects, event, self.limits)
            if result is DUPLICATE:
                self.duplicates += 1
                return findings  # the actor stage is idempotent anyway: skip the work
            findings = result.findings
        elif a_key is None:
            self.ignored += 1
            return findings
        if a_key is not None:
            if event["ts"] >= self.sweep_at:
                self.sweep(event["ts"])
            result = actor_stage(self.actors, event, self.limits)
            if result is not NOTHING:
                findings = findings + result.findings
                for access in result.accesses:
                    findings = findings + project_stage(self.projects, access, self.limits).findings
        return findings
