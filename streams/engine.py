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
from bisect import bisect_right
from collections.abc import Iterable, MutableMapping, Sequence
from dataclasses import dataclass, field
from math import floor
from operator import itemgetter
from typing import Any

from streams.dedup import remember
from streams.detector import Event, Result
from streams.eventtime import FIRST, order_key
from streams.eventtypes import SNAPSHOT
from streams.findings import Finding
from streams.registry import REGISTRY, Registry
from streams.settings import DetectorSettings

Access = dict[str, Any]
Entry = tuple[float, str, str, int, Event, Any]  # (*order_key, arrival, event, tag)
_time = itemgetter(0)


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


class Held:
    """Held entries `(time, type, id, arrival, event, tag)`, bucketed by whole second of event time.

    A heap cost a push and a pop per event, each a logarithmic walk of tuple comparisons; a bucket
    is a list append, sorted once (in C) when the watermark reaches it (the replay's CPU time on the
    bench's 200,000 events: ~10 % less, the same document). Buckets are numbered by `floor(time)`,
    which never decreases with the time, so every entry of a bucket comes before every entry of a
    later one: taking buckets in number order, each sorted, is the order a heap would give.
    """

    __slots__ = ("buckets", "numbers")

    def __init__(self) -> None:
        self.buckets: dict[float, list[Entry]] = {}
        self.numbers: list[float] = []  # a heap of the buckets' numbers

    def __len__(self) -> int:
        return sum(map(len, self.buckets.values()))

    def add(self, entry: Entry) -> None:
        ts = entry[0]
        number = ts if ts == FIRST else floor(ts)  # snapshot records (FIRST): a bucket before all
        bucket = self.buckets.get(number)
        if bucket is None:
            self.buckets[number] = [entry]
            heapq.heappush(self.numbers, number)
        else:
            bucket.append(entry)

    def due(self, mark: float) -> list[Entry]:
        """The entries at or before `mark`, in order; they leave the holding."""
        out: list[Entry] = []
        buckets, numbers = self.buckets, self.numbers
        while numbers and numbers[0] <= mark:
            number = numbers[0]
            bucket = buckets[number]
            bucket.sort()
            if bucket[-1][0] <= mark:
                out += bucket
                heapq.heappop(numbers)
                del buckets[number]
                continue
            cut = bisect_right(bucket, mark, key=_time)
            out += bucket[:cut]
            del bucket[:cut]
            break  # the rest of this bucket, and every later one, is after the mark
        return out


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
        self.held_actors = Held()
        self.held_projects = Held()
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
        kind, ident = event["event_type"], event["id"]  # order_key, inline: this runs for every event
        ts = FIRST if kind == SNAPSHOT else event["ts"]
        if ts < self.mark:
            self.late += 1
        self.seq += 1
        entry = (ts, kind, "" if ident is None else str(ident), self.seq, event, tag)
        if p_key is not None:
            self.held_projects.add(entry)
        if a_key is not None:
            self.held_actors.add(entry)
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
        limits, registry, projects, errors = self.limits, self.registry, self.held_projects, self.errors
        due = self.held_actors.due(mark)
        actors = self.actors
        for entry in due:
            try:
                result = actor_stage(actors, entry[4], limits, registry)
            except Exception as exc:  # noqa: BLE001 - one event never stops the others
                errors.append((entry[5], exc))
                continue
            if result is not NOTHING:
                findings += result.findings
                for access in result.accesses:
                    self.seq += 1
                    projects.add((*order_key(access), self.seq, access, entry[5]))
        if due and self.mark >= self.sweep_at:  # after them: what is held now is after the watermark
            self.sweep(self.mark)
        states = self.projects
        for entry in projects.due(mark):
            try:
                result = project_stage(states, entry[4], limits, registry)
            except Exception as exc:  # noqa: BLE001 - one event never stops the others
                errors.append((entry[5], exc))
                continue
            if result is DUPLICATE:
                self.duplicates += 1
            elif result.findings:
                findings += result.findings
        return findings
