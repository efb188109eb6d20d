"""The events a stage partition holds for the watermark: in memory, rebuilt from the stage topic.

A held event used to live inside its key's value, so every key was written to the changelog twice
— when its events were held and again when they were released — with its held list each time.
Now a stage partition keeps them here, and the changelog gets only what the detectors changed:

* Each flush marker (`streams.batching`) also says `held`: the lowest stage offset of a message
  with an event still held. A restarted worker (or a partition that moved) reads the stage topic
  from there up to the offset expected next (`streams.continuity`) and holds those events again.
* Each key's value records, per input partition, the highest source coordinates it has *applied*
  (`src`), and the coordinates of its events still held below them (`pend`: a key's events are
  applied in event-time order, not in arrival order), in the same changelog record as the state
  they produced. So a record read again — by that re-read, or redelivered — is skipped when its
  key has applied it, and held again when it has not; a crash between any two changelog records
  of a flush loses nothing and applies nothing twice.

Entries are flat tuples (time, type, id, record, stage offset), so releasing sorts on floats and
strings, never on the records.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from operator import itemgetter
from typing import Any, NamedTuple

from streams.batching import is_marker
from streams.eventtime import FIRST, order_key

PEND = "pend"  # the key of a value: source coordinates (below `src`) of its events held, not applied
Entry = tuple[float, str, str, dict[str, Any], int]
_ORDER = itemgetter(0, 1, 2)


class Reread(NamedTuple):
    """A stage message read again after a restart for the events it held (`_KeyedHandler._reload`)."""

    message: Any


def took(value: dict[str, Any], ready: list[Entry], coords_key: str) -> dict[str, Any]:
    """A key's value after its `ready` events were applied: its source coordinates cover them,
    and none of them is pending any more (the flush records the rest: `Holding.pend`)."""
    if PEND in value:
        value[PEND] = [s for s in value[PEND] if all(s != e[3].get("src") for e in ready)]
    coords = value.get(coords_key)
    for entry in ready:
        src = entry[3].get("src")
        if src is not None:
            if coords is None:
                coords = value[coords_key] = {}
            last = coords.get(str(src[0]))
            if last is None or src[1:] > last:
                coords[str(src[0])] = src[1:]
    return value


def applied(value: dict[str, Any], src: Sequence[int], coords_key: str) -> bool:
    """Whether a key's value has applied the record at these source coordinates (input partition,
    offset, element): at or below the highest it applied from that partition, and not pending."""
    coords = value.get(coords_key)
    last = None if coords is None else coords.get(str(src[0]))
    if last is None or list(src[1:]) > last:
        return False
    pending = value.get(PEND)
    return pending is None or list(src) not in pending


class Holding:
    """One stage partition's held events, by key; which keys are due; where they came from."""

    __slots__ = ("due", "heap", "held", "offsets", "srcs")

    def __init__(self) -> None:
        self.held: dict[str, list[Entry]] = {}
        self.due: dict[str, float] = {}  # key -> the earliest time of its held events
        self.heap: list[tuple[float, str]] = []  # (due time, key); entries whose time is no longer due are stale
        self.srcs: set[tuple[int, ...]] = set()  # source coordinates of the held events
        self.offsets: dict[int, int] = {}  # stage offset -> how many held events came in that message

    def __len__(self) -> int:
        return sum(map(len, self.held.values()))

    def holds(self, src: Sequence[int]) -> bool:
        return tuple(src) in self.srcs

    def add(self, key: str, record: dict[str, Any], offset: int) -> float:
        """Hold one record of `key` (from the stage message at `offset`); its event time."""
        at, kind, ident = order_key(record)
        entries = self.held.get(key)
        if entries is None:
            entries = self.held[key] = []
        entries.append((at, kind, ident, record, offset))
        src = record.get("src")
        if src is not None:
            self.srcs.add(tuple(src))
        self.offsets[offset] = self.offsets.get(offset, 0) + 1
        if at < self.due.get(key, float("inf")):
            self.due[key] = at
            heapq.heappush(self.heap, (at, key))
        return at

    def due_keys(self, ahead: float) -> list[str]:
        """The keys holding an event at or before `ahead`, sorted (the order they are released in)."""
        keys = set()
        heap, due = self.heap, self.due
        while heap and heap[0][0] <= ahead:
            at, key = heapq.heappop(heap)
            if due.get(key) == at:
                keys.add(key)
        return sorted(keys)

    def take(self, key: str, mark: float, ahead: float, early: frozenset[str]) -> list[Entry]:
        """The key's held events the watermarks have passed, in order (`early` types by `ahead`);
        the rest stay held."""
        entries = self.held.pop(key, None)
        self.due.pop(key, None)
        if not entries:
            return []
        ready: list[Entry] = []
        rest: list[Entry] = []
        for entry in entries:
            (ready if entry[0] <= (ahead if entry[1] in early else mark) else rest).append(entry)
        if rest:
            self.held[key] = rest
            at = self.due[key] = min(entry[0] for entry in rest)
            heapq.heappush(self.heap, (at, key))
        offsets, srcs = self.offsets, self.srcs
        for entry in ready:
            src = entry[3].get("src")
            if src is not None:
                srcs.discard(tuple(src))
            left = offsets[entry[4]] - 1
            if left:
                offsets[entry[4]] = left
            else:
                del offsets[entry[4]]
        ready.sort(key=_ORDER)
        return ready

    def held_from(self) -> int | None:
        """The lowest stage offset of a message with an event still held (None: nothing held)."""
        return min(self.offsets) if self.offsets else None

    def marker(self, released: tuple[float, float] | None) -> dict[str, Any]:
        """What the partition's flush marker adds: the first stage offset with an event still
        held, and how far both watermarks had released (what a restart need not hold again)."""
        held = self.held_from()
        upto = {"upto": list(released or (FIRST, FIRST))}
        return upto if held is None else {"held": held, **upto}

    def pend(self, view: Any, coords_key: str) -> None:
        """Before a flush: each changed value records which of its key's held events are below
        its source coordinates (applied out of arrival order)."""
        for key in view.changed():
            value = view.get(key)
            if not isinstance(value, dict) or is_marker(key):
                continue
            coords = value.get(coords_key)
            pending = self.pending(key, coords) if coords and key in self.held else []
            if pending:
                value[PEND] = pending
            elif PEND in value:
                del value[PEND]

    def pending(self, key: str, coords: dict[str, list[int]]) -> list[list[int]]:
        """Source coordinates of the key's held events at or below what its value has applied."""
        out = []
        for entry in self.held.get(key, ()):
            src = entry[3].get("src")
            if src is not None:
                last = coords.get(str(src[0]))
                if last is not None and src[1:] <= last:
                    out.append(list(src))
        return out
