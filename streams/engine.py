"""The two keyed stages every normalized event goes through, over state held in mappings.

* The project stage (key: project path) — download tallies, allowlists, gaps.
* The actor stage (key: author id) — mass downloads, job-token correlation; it emits *access*
  records that belong to the accessed project's stage.

The worker runs each stage on its own topic partitioned by that key, with a Faust Table behind
the mapping; `Engine` runs both in one process over dicts (the replay and the unit tests).
"""

from __future__ import annotations

from collections.abc import MutableMapping
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
        counted, findings = True, gaps.recheck(value, event["ts"])
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


class Engine:
    """Both stages over dicts, in one process: the offline replay and the unit tests."""

    def __init__(self, limits: DetectorSettings) -> None:
        self.limits = limits
        self.projects: dict[str, Any] = {}
        self.actors: dict[str, Any] = {}
        self.events = self.duplicates = self.ignored = 0

    @property
    def stats(self) -> dict[str, int]:
        return {"events": self.events, "duplicates": self.duplicates, "ignored": self.ignored}

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
            result = actor_stage(self.actors, event, self.limits)
            if result is not NOTHING:
                findings = findings + result.findings
                for access in result.accesses:
                    findings = findings + project_stage(self.projects, access, self.limits).findings
        return findings
