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

import heapq
from collections.abc import Iterable, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from streams.dedup import remember
from streams.detector import Event, Result
from streams.eventtime import FIRST, order_key
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
    handlers, lane = registry.project_calls.get(event["event_type"], registry.project_other)
    if not handlers:
        return NOTHING  # no project detector reads it: no write
    key = event["pkey"]
    value = projects.get(key)
    if value is None:
        value = registry.new_project()
    if lane and event["id"] is not None and not remember(value, event["id"], event["ts"], limits, lane):
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
    """Both stages over dicts, in one process: the offline replay and the unit tests.

    It follows the worker's event-time rules (`streams.eventtime`) over one input: an event is
    held until the watermark — the newest event time read minus the allowed lateness — passes
    it; then the actor stage applies what it releases, in order, and the project stage what it
    releases (the accesses just produced included). `finish()` releases the rest at the end.
    """

    def __init__(self, limits: DetectorSettings, registry: Registry = REGISTRY) -> None:
        self.limits = limits
        self.registry = registry
        self.projects: dict[str, Any] = {}
        self.actors: dict[str, Any] = {}
        self.events = self.duplicates = self.ignored = self.expired = self.late = 0
        self.sweep_at = float("-inf")  # event time of the next sweep of idle users
        self.mark = FIRST  # the watermark: held events at or before it are applied
        self.newest = FIRST
        self.seq = 0  # arrival number: breaks the ties order_key leaves (repeated deliveries)
        # Heaps of (*order_key, arrival, event, tag): one flat tuple, so a heap step compares floats
        # first, not a nested tuple (measured: the heaps are a tenth of the replay's time).
        self.held_actors: list[tuple[float, str, str, int, Event, Any]] = []
        self.held_projects: list[tuple[float, str, str, int, Event, Any]] = []
        self.errors: list[tuple[Any, BaseException]] = []  # (tag of the event, what it raised)

    @property
    def stats(self) -> dict[str, int]:
        return {"events": self.events, "duplicates": self.duplicates, "ignored": self.ignored,
                "late": self.late, "users_expired": self.expired}

    def sweep(self, now: float) -> None:
        """Forget users idle past the horizon; run once per horizon of event time (amortized O(1) an event)."""
        for key in idle_actors(self.actors.items(), now, self.limits, self.registry):
            del self.actors[key]
            self.expired += 1
        self.sweep_at = now + self.registry.horizon(self.limits)

    def apply(self, event: Event) -> list[dict[str, Any]]:
        """One normalized event in; the findings released by it, as the JSON dicts that are
        published (`step` gives the records; `finish` what is still held at the end)."""
        return [finding.as_dict() for finding in self.step(event)]

    def step(self, event: Event, tag: Any = None) -> list[Finding]:
        """Hold one normalized event, move the watermark, and apply what it passed; the findings.

        An exception a detector raises is kept in `errors` with the event's `tag` (the replay's
        line number), and the rest goes on."""
        self.events += 1
        p_key, a_key = event["pkey"], event["akey"]
        if p_key is None and a_key is None:
            self.ignored += 1
            return NOTHING.findings
        ts, kind, ident = order_key(event)
        if ts < self.mark:
            self.late += 1
        self.seq += 1
        entry = (ts, kind, ident, self.seq, event, tag)
        if p_key is not None:
            heapq.heappush(self.held_projects, entry)
        if a_key is not None:
            heapq.heappush(self.held_actors, entry)
        # a snapshot's time (taken_at, FIRST in order_key) is not stream time: it moves no watermark
        if ts > self.newest:
            self.newest = ts
            self.mark = max(self.mark, ts - self.limits.allowed_lateness)
        elif ts > self.mark:  # the watermark stayed, and the last release left nothing at or before it
            return NOTHING.findings
        return self.release(self.mark)

    def finish(self) -> list[Finding]:
        """The end of the input: everything held is applied."""
        self.mark = max(self.mark, self.newest)
        return self.release(float("inf"))

    def release(self, mark: float) -> list[Finding]:
        """Apply the held events at or before `mark`: the actor stage's first (its accesses join
        the project stage's held events), then the project stage's; each in `order_key` order."""
        findings: list[Finding] = []
        actors, projects, limits, registry = self.held_actors, self.held_projects, self.limits, self.registry
        while actors and actors[0][0] <= mark:
            *_, event, tag = heapq.heappop(actors)
            if self.mark >= self.sweep_at:
                self.sweep(self.mark)
            try:
                result = actor_stage(self.actors, event, limits, registry)
            except Exception as exc:  # noqa: BLE001 - one event never stops the others
                self.errors.append((tag, exc))
                continue
            if result is not NOTHING:
                findings += result.findings
                for access in result.accesses:
                    self.seq += 1
                    heapq.heappush(projects, (*order_key(access), self.seq, access, tag))
        while projects and projects[0][0] <= mark:
            *_, event, tag = heapq.heappop(projects)
            try:
                result = project_stage(self.projects, event, limits, registry)
            except Exception as exc:  # noqa: BLE001 - one event never stops the others
                self.errors.append((tag, exc))
                continue
            if result is DUPLICATE:
                self.duplicates += 1
            elif result.findings:
                findings += result.findings
        return findings
