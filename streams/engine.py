"""The two keyed stages every normalized event goes through, over state held in mappings.

* The project stage (key: project path) — download tallies, allowlists, gaps.
* The actor stage (key: author id) — mass downloads, job-token correlation; it emits *access*
  records that belong to the accessed project's stage.

Which detector runs for which event type, and what a new value holds, comes from the list in
`streams.registry`; nothing here names a detector.

The worker runs each stage on its own topic partitioned by that key, with a Faust Table behind
the mapping; `Engine` runs both in one process over dicts (the replay and the unit tests).
"""

from __future__ import annotations

from collections.abc import Iterable, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from streams.dedup import remember
from streams.detector import Event, Result
from streams.findings import Finding
from streams.registry import REGISTRY, Registry
from streams.settings import DetectorSettings

Access = dict[str, Any]


@dataclass(slots=True)
class StageResult:
    """What one event produced: findings to publish, accesses to forward, whether it was a duplicate."""

    findings: list[Finding] = field(default_factory=list)
    accesses: list[Access] = field(default_factory=list)
    duplicate: bool = False


NOTHING = StageResult()  # shared results: read them, never mutate them
DUPLICATE = StageResult(duplicate=True)


def _add(result: StageResult, out: Sequence[Result]) -> StageResult:
    """A detector's results into the event's (a new one the first time): findings, and the records
    it forwards (plain dicts) to the project stage."""
    if result is NOTHING:
        result = StageResult([], [])
    findings, accesses = result.findings, result.accesses
    for item in out:
        if isinstance(item, dict):
            accesses.append(item)
        else:
            findings.append(item)
    return result


def project_stage(projects: MutableMapping[str, Any], event: Event, limits: DetectorSettings,
                  registry: Registry = REGISTRY) -> StageResult:
    """Apply one event (or access record) to its project's value; one read and one write."""
    handlers, dedup = registry.project_calls.get(event["event_type"], registry.project_other)
    if not handlers:
        return NOTHING  # no project detector reads it: no write
    key = event["pkey"]
    value = projects.get(key)
    if value is None:
        value = registry.new_project()
    if dedup and event["id"] is not None and not remember(value, event["id"], event["ts"], limits):
        return DUPLICATE  # nothing changed: no write
    result = NOTHING
    for handle in handlers:  # the loop is inline: a function call costs, per event
        out = handle(value, event, limits)
        if out:
            result = _add(result, out)
    projects[key] = value
    return result


def actor_stage(actors: MutableMapping[str, Any], event: Event, limits: DetectorSettings,
                registry: Registry = REGISTRY) -> StageResult:
    """Apply one event to its author's value; one read and one write."""
    key = event["akey"]
    value = actors.get(key)
    if value is None:
        value = registry.new_actor()
    result = NOTHING
    handlers, _ = registry.actor_calls.get(event["event_type"], registry.actor_other)
    for handle in handlers:
        out = handle(value, event, limits)
        if out:
            result = _add(result, out)
    actors[key] = value
    return result


def actor_horizon(limits: DetectorSettings, registry: Registry = REGISTRY) -> float:
    """Event time after which an idle user's value can no longer change a result: the longest of
    the actor detectors' horizons (for the mass download its window, whose alert suppression ends
    one window after an alert; for the correlation a few of its windows)."""
    return registry.horizon(limits)


def idle_actors(actors: Iterable[tuple[str, Any]], now: float, limits: DetectorSettings,
                registry: Registry = REGISTRY) -> list[str]:
    """The keys of (key, value) pairs whose user has been idle longer than the horizon at `now`.

    Dropping them keeps actor state proportional to *active* users, at no cost per event. It is
    exact for every event less than the horizon behind the newest one seen; an event delivered
    later than that, for a user dropped meanwhile, starts from an empty value (it is still
    counted, but not correlated with what was dropped).
    """
    cutoff = now - registry.horizon(limits)
    return [key for key, value in actors if registry.idle(value, cutoff)]


class Engine:
    """Both stages over dicts, in one process: the offline replay and the unit tests."""

    def __init__(self, limits: DetectorSettings, registry: Registry = REGISTRY) -> None:
        self.limits = limits
        self.registry = registry
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
        for key in idle_actors(self.actors.items(), now, self.limits, self.registry):
            del self.actors[key]
            self.expired += 1
        self.sweep_at = now + self.registry.horizon(self.limits)

    def apply(self, event: Event) -> list[dict[str, Any]]:
        """One normalized event through both stages; the findings it produced, in order, as the
        JSON dicts that are published (`step` gives the records)."""
        return [finding.as_dict() for finding in self.step(event)]

    def step(self, event: Event) -> list[Finding]:
        """One normalized event through both stages; the findings it produced, in order."""
        self.events += 1
        p_key, a_key, registry = event["pkey"], event["akey"], self.registry
        findings = NOTHING.findings
        if p_key is not None:
            result = project_stage(self.projects, event, self.limits, registry)
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
            result = actor_stage(self.actors, event, self.limits, registry)
            if result is not NOTHING:
                findings = findings + result.findings
                for access in result.accesses:
                    findings = findings + project_stage(self.projects, access, self.limits, registry).findings
        return findings
