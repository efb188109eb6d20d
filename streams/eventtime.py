"""Event time: the same results whatever the arrival order and the partitioning of the input.

Each stage holds an event until the **watermark** passes its `created_at`, then applies the
events it releases in `order_key` order — so every key sees its events in event-time order, and
a detector's result depends on the set of events, not on how they arrived. A release takes the
events strictly before the watermark, never one at it: an event that arrives later with the same
time (on time, or late and applied as of the watermark) then joins those still held and is
sorted with them, so the order a key's events are applied in is the order of their (time, type,
id, arrival), whatever the batches and releases.

* The input's watermark is the progress (the newest `created_at` read) of the slowest input
  partition, minus the allowed lateness (`SUNSET_ALLOWED_LATENESS`). An input partition that has
  been caught up and silent for `SUNSET_IDLE_AFTER` seconds stops holding it back; when every one
  is, the watermark moves to the newest event time read, so the last events' findings come out.
* The project stage also waits for the actor stage: its watermark is the lower of the input's and
  of every actor partition's released watermark, so the accesses an actor partition releases are
  in the project's hands before the project releases events of the same time. Types that no
  detector reading accesses reads would be released by the input's watermark alone
  (`Registry.project_early`); there are none today (the allowlist-gap detector reads downloads
  for a project's visibility), so every project event waits for the actor stage.
* An event is *late* when it is more than the allowed lateness older than the newest event read
  before it from the same input partition (the replay: from the same file). It is applied as of
  that bound — its `ts` becomes the newest time read minus the lateness, `late` keeps its own —
  so it takes its place in event-time order after what was applied before it, and no finding's
  times contradict each other. Whether an event is late, and when it is applied, depends only on
  the order of its input partition: two runs of the same input give the same findings. Ingest
  applies the rule (`streams.worker.ingest`); a stage applies the same bound with its own
  watermark to an event that still arrives behind it (after a restart, or from an input partition
  that was idle), so nothing is applied out of order.

`Holding` holds the events and releases them in order: the replay holds in one per stage, a
worker's stage partition in one per watermark. `Progress` is one stage partition's record of its
upstream sources (JSON, kept in the table under `progress_key(partition)`, and in each flush marker,
from which a restarted worker resumes it: `streams.worker.agents`). The replay
(`streams.replay.Engine`) is the one-partition case: the watermark is the newest event time read
minus the lateness, and everything is released at the end of the file.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left
from math import floor, inf, nextafter
from operator import itemgetter
from typing import Any

from streams.audit import SNAPSHOT

PROGRESS = "__progress__"  # the event_type of a progress record between the stages
PROGRESS_PREFIX = "__sunset_progress__/"
SRC = "src"  # per input partition, the highest (offset, element) a stage value has applied (streams.worker.agents)
FIRST = float("-inf")
Entry = tuple[float, str, str, int, dict[str, Any], Any]  # (*order_key, arrival, event, tag)
_time = itemgetter(0)


def order_key(event: dict[str, Any]) -> tuple[float, str, str]:
    """The order a key's events are applied in: event time, then type and id (ties broken the
    same way everywhere). Snapshot records describe what stood before them: they come first."""
    kind = event["event_type"]
    ident = event["id"]
    return (FIRST if kind == SNAPSHOT else event["ts"], kind, "" if ident is None else str(ident))


def as_of(event: dict[str, Any], bound: float) -> float:
    """A late event, applied as of `bound` (the newest time read before it minus the lateness): its
    `ts` becomes the bound, `late` keeps its own; the bound."""
    event["late"] = event["ts"]
    event["ts"] = bound
    return bound


def progress_key(partition: int) -> str:
    return f"{PROGRESS_PREFIX}{partition}"


def input_report(partitions: int, at: dict[int, float], idle: set[int]) -> dict[str, Any]:
    """What ingest tells every stage partition: its input partitions' progress and idleness."""
    return {"event_type": PROGRESS, "source": "input", "n": partitions,
            "at": {str(p): ts for p, ts in at.items()}, "idle": sorted(idle)}


def actors_report(partitions: int, marks: dict[int, float]) -> dict[str, Any]:
    """How far each of several actor partitions (one batch's) has released: one record to each
    project partition instead of one per actor partition."""
    return {"event_type": PROGRESS, "source": "actors", "n": partitions,
            "at": {str(partition): mark for partition, mark in marks.items()}}


def new_progress() -> dict[str, Any]:
    return {"input": {"n": None, "at": {}, "idle": []}, "actors": {"n": None, "at": {}}, "released": None}


def merge(progress: dict[str, Any], report: dict[str, Any]) -> None:
    """A report into a stage partition's progress: times only move forward; idleness is the latest word."""
    part = progress[report["source"]]
    part["n"] = report["n"]
    at = part["at"]
    for source, ts in report["at"].items():
        if ts is not None and (at.get(source) is None or ts > at[source]):
            at[source] = ts
    if report["source"] == "input":
        idle = {str(p) for p in part["idle"]}
        for source in report["at"]:
            idle.discard(source)
        idle.update(str(p) for p in report["idle"])
        part["idle"] = sorted(idle)


def input_watermark(progress: dict[str, Any], lateness: float) -> float | None:
    """The slowest active input partition's progress minus the lateness; None until every input
    partition has reported (or is idle); the newest progress when all are idle."""
    part = progress["input"]
    if part["n"] is None:
        return None
    at, idle = part["at"], set(part["idle"])
    active = []
    for source in map(str, range(part["n"])):
        if source in idle:
            continue
        if source not in at:
            return None
        active.append(at[source])
    if active:
        return float(min(active)) - lateness
    return nextafter(max(at.values()), inf) if at else None  # just above: everything read is released


def actors_watermark(progress: dict[str, Any]) -> float | None:
    """How far every actor partition has released (None until each has said)."""
    part = progress["actors"]
    if part["n"] is None:
        return None
    times = [part["at"].get(str(p)) for p in range(part["n"])]
    return None if any(t is None for t in times) else float(min(t for t in times if t is not None))


def _monotonic(progress: dict[str, Any], name: str, mark: float | None) -> float:
    released = progress.get(name)
    if mark is None:
        return FIRST if released is None else float(released)
    if released is not None and released > mark:
        return float(released)
    progress[name] = mark
    return mark


def watermarks(progress: dict[str, Any], lateness: float, stage: str) -> tuple[float, float]:
    """The stage partition's watermarks — the input's, and the one that also waits for the actor
    stage (the same in the actor stage); neither goes back (`released*` remember the highest)."""
    mark = input_watermark(progress, lateness)
    first = _monotonic(progress, "released_input", mark)
    if stage == "project" and mark is not None:
        actors = actors_watermark(progress)
        mark = None if actors is None else min(mark, actors)
    return first, _monotonic(progress, "released", mark)


class Holding:
    """Held events, in the order they are applied: `(time, type, id, arrival, record, tag)`.

    The replay holds in one for each stage; a worker's stage partition in one (two in the project
    stage: the types released by the input's watermark alone, and the rest). Entries are bucketed by
    whole second of event time: holding is a list append, and a bucket is sorted once (in C) when
    the watermark reaches it. Buckets are numbered by `floor(time)`, which never decreases with the
    time, so every entry of a bucket comes before every entry of a later one: taking buckets in
    number order, each sorted, is `order_key` order (ties: arrival).
    """

    __slots__ = ("buckets", "numbers", "arrivals")

    def __init__(self) -> None:
        self.buckets: dict[float, list[Entry]] = {}
        self.numbers: list[float] = []  # a heap of the buckets' numbers
        self.arrivals = 0

    def __len__(self) -> int:
        return sum(map(len, self.buckets.values()))

    def earliest(self) -> float:
        """A time at or before every held entry's (inf: nothing held)."""
        return self.numbers[0] if self.numbers else float("inf")

    def hold(self, order: tuple[float, str, str], record: dict[str, Any], tag: Any) -> Entry:
        """Hold one record at its place `order` (its `order_key`, or that with the time it is
        applied as of); the entry."""
        self.arrivals += 1
        entry = (*order, self.arrivals, record, tag)
        self.add(entry)
        return entry

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
        """The entries before `mark` (not at it: see the module), in order; they leave the holding."""
        out: list[Entry] = []
        buckets, numbers = self.buckets, self.numbers
        while numbers and numbers[0] < mark:
            number = numbers[0]
            bucket = buckets[number]
            bucket.sort()
            if bucket[-1][0] < mark:
                out += bucket
                heapq.heappop(numbers)
                del buckets[number]
                continue
            cut = bisect_left(bucket, mark, key=_time)
            out += bucket[:cut]
            del bucket[:cut]
            break  # the rest of this bucket, and every later one, is at or after the mark
        return out
