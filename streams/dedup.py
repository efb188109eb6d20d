"""The project stage's record of event ids: GitLab's repeated deliveries are counted once.

It is the stage's, not a detector's: a detector lists the event types whose `id` the stage
remembers before it runs (`Detector.dedup`); a repeat is a duplicate that no detector sees and
that writes nothing. The record lives in each project's value next to the detectors' parts, so
one changelog record carries both — after a crash, a replayed event is recognised.

Keys in the project value: `seen` ({id: ts}), `clock` (the project's newest event time, which
any project detector may read), and `pruned` (added at the first id).
"""

from __future__ import annotations

from typing import Any

from streams.settings import DetectorSettings

STAGE_SETTINGS = ("dedup_ttl", "dedup_max")


def new_record() -> dict[str, Any]:
    """The stage's own keys of an empty project value."""
    return {"seen": {}, "clock": 0.0}


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
