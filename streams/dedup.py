"""The project stage's record of event ids: GitLab's repeated deliveries are counted once.

It is the stage's, not a detector's: a detector lists the event types whose `id` the stage
remembers before it runs (`Detector.dedup`); a repeat is a duplicate that no detector sees and
that writes nothing. The record lives in each project's value next to the detectors' parts, so
one changelog record carries both — after a crash, a replayed event is recognised.

Keys in the project value: `seen` ({id: ts}), `clock` (the project's newest event time, which
any project detector may read), and `pruned` (added at the first id); `ordered` holds the same
three for the records applied by the watermark that waits for the actor stage (see `remember`).
"""

from __future__ import annotations

from typing import Any

from streams.settings import DetectorSettings

STAGE_SETTINGS = ("dedup_ttl", "allowed_lateness")  # the stages' own: this record's, and streams.eventtime's


def new_record() -> dict[str, Any]:
    """The stage's own keys of an empty project value."""
    return {"seen": {}, "clock": 0.0}


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
