"""The two keyed stages every normalized event goes through, over state held in mappings.

* The project stage (key: project path) — download tallies, allowlists, gaps.
* The actor stage (key: author id) — mass downloads, job-token correlation; it emits *access*
  records that belong to the accessed project's stage.

Which detector runs for which event type, and what a new value holds, comes from the list in
`streams.detectors.registry`; nothing here names a detector. The worker runs each stage on its own
topic partitioned by that key, with a Faust Table behind the mapping (`streams.worker.agents`); the
replay runs both in one process over dicts (`streams.replay.Engine`).

The project stage's record of event ids: GitLab's repeated deliveries are counted once. It is the
stage's, not a detector's: a detector lists the event types whose `id` the stage remembers before
it runs (`Detector.dedup`); a repeat is a duplicate that no detector sees and that writes nothing.
The record lives in each project's value next to the detectors' parts, so one changelog record
carries both — after a crash, a replayed event is recognised. Keys in the project value: `seen`
({id: ts}), `clock` (the project's newest event time, which any project detector may read), and
`pruned` (added at the first id); `ordered` holds the same three for the records applied by the
watermark that waits for the actor stage (see `remember`).
"""

from __future__ import annotations

from collections.abc import Iterable, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from streams.detectors.base import Event, Finding, Result
from streams.detectors.registry import REGISTRY, Registry, new_record
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



STAGE_SETTINGS = ("dedup_ttl", "allowed_lateness")  # the stages' own: this record's, and streams.eventtime's


def remember(value: dict[str, Any], event_id: str, ts: float, limits: DetectorSettings, lane: str = "seen") -> bool:
    """Record `event_id` in the project's expiring record; False if it was already there.

    Expiry runs on event time: an id is kept `dedup_ttl` seconds behind the project's newest
    `created_at`. Events reach the stage in event-time order (`streams.eventtime`), so a repeated
    delivery — same id, same `created_at` — meets its first one there whatever arrived between
    them; a time horizon, not a count of ids, so a busy project forgets nothing it still needs.

    `lane`: downloads (`seen`, in the value itself) are applied by the input's watermark, ahead
    of the project's other deduplicated records (accesses, auth-log rows: `ordered`, a record of
    its own), so neither one's newest time expires the other's ids.
    """
    if lane != "seen":
        value = value.get(lane) or value.setdefault(lane, new_record())
    seen: dict[str, float] = value["seen"]
    if event_id in seen:
        return False
    seen[event_id] = ts
    clock = value["clock"]
    if ts > clock:
        value["clock"] = clock = ts
    # Prune in bulk (a rebuilt dict, not deletions from the front, which leave a CPython dict
    # slower to iterate), once a quarter TTL has passed since the last time.
    if clock - value.get("pruned", clock) > limits.dedup_ttl / 4:
        cutoff = min(clock, ts) - limits.dedup_ttl  # never this event's own id: it must meet its repeat
        value["seen"] = {k: t for k, t in seen.items() if t >= cutoff}
        value["pruned"] = clock
    elif "pruned" not in value:
        value["pruned"] = clock
    return True
