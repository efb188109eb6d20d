"""A stage partition's held records (`streams.worker.agents.Held`, over `streams.eventtime.Holding`):
released in order, and which records a key's value says it has applied — what a restarted worker
skips or holds again."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from streams.eventtime import Entry, order_key
from streams.worker.agents import PEND, Held, applied, took


def rec(kind: str, ts: float, ident: str, src: list[int] | None = None, key: str = "k") -> dict[str, Any]:
    out: dict[str, Any] = {"event_type": kind, "ts": ts, "id": ident, "akey": key}
    if src is not None:
        out["src"] = src
    return out


def hold(held: Held, record: dict[str, Any], offset: int, early: bool = False) -> None:
    src = record.get("src")
    held.hold(record["akey"], record, offset, early, order_key(record), src=None if src is None else tuple(src))


def test_records_come_out_in_event_time_order_and_leave_the_holding() -> None:
    held = Held()
    hold(held, rec("push", 30.0, "3", [0, 7, 0], key="b"), offset=5)
    hold(held, rec("push", 10.0, "1", [0, 8, 0], key="b"), offset=6)
    hold(held, rec("push", 20.0, "2", [1, 2, 0], key="a"), offset=6)
    hold(held, rec("push", 90.0, "9", [1, 3, 0], key="c"), offset=7)
    assert [e[2] for e in held.release(25.0, 25.0, "akey")] == ["1", "2"]
    # b keeps its record of 30 s (from the message at offset 5): the oldest message held
    assert (held.held_from(), len(held), held.holding("b"), held.holding("a")) == (5, 2, True, False)
    assert held.holds("b", (0, 7, 0)) and not held.holds("b", (0, 8, 0))
    assert held.release(25.0, 25.0, "akey") == []
    assert not held.passed(25.0, 25.0) and held.passed(30.0, 30.0)
    assert [e[2] for e in held.release(100.0, 100.0, "akey")] == ["3", "9"]
    assert (held.held_from(), len(held), held.marker((100.0, 100.0))) == (None, 0, {"upto": [100.0, 100.0]})


def test_early_types_go_by_the_input_watermark() -> None:
    held = Held()
    hold(held, rec("download", 50.0, "d", [0, 1, 0]), offset=0, early=True)
    hold(held, rec("access", 40.0, "x", [0, 2, 0]), offset=0)
    assert [e[2] for e in held.release(60.0, 30.0, "akey")] == ["d"]
    assert held.marker((60.0, 30.0)) == {"held": 0, "upto": [60.0, 30.0]}
    assert held.release(60.0, 40.0, "akey") == []  # a release takes what is before its watermark, not at it
    assert [e[2] for e in held.release(60.0, 40.5, "akey")] == ["x"]


def test_a_record_without_coordinates_still_keeps_its_key_held() -> None:
    held = Held()
    hold(held, rec("access", 40.0, "x"), offset=3)
    assert held.holding("k") and held.pending("k", {"0": [9, 0]}) == []
    held.release(41.0, 41.0, "akey")
    assert not held.holding("k")


def test_a_value_has_applied_what_its_coordinates_cover_except_what_is_pending() -> None:
    held = Held()
    hold(held, rec("push", 10.0, "late", [2, 4, 0]), offset=1)  # held, below what the key applied
    hold(held, rec("push", 99.0, "new", [2, 9, 0]), offset=1)  # held, above it
    coords = {"2": [6, 0]}
    value = {"src": coords, PEND: held.pending("k", coords)}
    assert value[PEND] == [[2, 4, 0]]
    assert [applied(value, src, "src") for src in ((2, 3, 0), (2, 4, 0), (2, 6, 0), (2, 6, 1), (2, 9, 0),
                                                      (5, 1, 0))] == [True, False, True, False, False, False]


coordinates = st.tuples(st.integers(-1, 3), st.integers(0, 50), st.integers(0, 3))


@given(stored=st.dictionaries(st.integers(0, 3), st.tuples(st.integers(0, 50), st.integers(0, 3))),
       pending=st.lists(coordinates.filter(lambda c: c[0] >= 0), max_size=6),
       ready=st.lists(coordinates, max_size=8))
def test_a_value_covers_what_it_took_and_stops_pending_it(
        stored: dict[int, tuple[int, int]], pending: list[tuple[int, int, int]],
        ready: list[tuple[int, int, int]]) -> None:
    """After `took`, a key's coordinates per input partition are the highest of what they were and
    of the released records (an access, partition -1, has none), and none of those records is
    pending; the other pending ones stay, in their order."""
    value: dict[str, Any] = {"src": {str(p): list(c) for p, c in stored.items()}} if stored else {}
    if pending:
        value[PEND] = [list(c) for c in pending]
    entries: list[Entry] = [(0.0, "push", str(i), i, {}, (0, src)) for i, src in enumerate(ready)]
    took(value, entries, "src")
    expected = {p: list(c) for p, c in stored.items()}
    for partition, *here in ready:
        if partition != -1 and (partition not in expected or here > expected[partition]):
            expected[partition] = here
    assert value.get("src", {}) == {str(p): c for p, c in expected.items()}
    if pending:
        assert value[PEND] == [list(c) for c in pending if c not in set(ready)]
