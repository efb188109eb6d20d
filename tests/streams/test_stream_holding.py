"""A stage partition's held events (streams.worker.agents): released in order, and which records a key's
value says it has applied — what a restarted worker skips or holds again."""

from __future__ import annotations

from typing import Any

from streams.worker.agents import PEND, Holding, applied


def rec(kind: str, ts: float, ident: str, src: list[int] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"event_type": kind, "ts": ts, "id": ident}
    if src is not None:
        out["src"] = src
    return out


def test_due_keys_come_sorted_and_each_key_releases_in_event_time_order() -> None:
    holding = Holding()
    holding.add("b", rec("push", 30.0, "3", [0, 7, 0]), offset=5)
    holding.add("b", rec("push", 10.0, "1", [0, 8, 0]), offset=6)
    holding.add("a", rec("push", 20.0, "2", [1, 2, 0]), offset=6)
    holding.add("c", rec("push", 90.0, "9", [1, 3, 0]), offset=7)
    assert holding.due_keys(25.0) == ["a", "b"]
    assert [e[2] for e in holding.take("b", 25.0, 25.0, frozenset())] == ["1"]
    assert [e[2] for e in holding.take("a", 25.0, 25.0, frozenset())] == ["2"]
    # b keeps its event of 30 s (from the message at offset 5): it is due again, and the oldest message held
    assert (holding.held_from(), holding.due, len(holding)) == (5, {"b": 30.0, "c": 90.0}, 2)
    assert holding.holds([0, 7, 0]) and not holding.holds([0, 8, 0])
    assert holding.due_keys(25.0) == []
    assert holding.due_keys(100.0) == ["b", "c"]


def test_early_types_go_by_the_input_watermark() -> None:
    holding = Holding()
    holding.add("p", rec("download", 50.0, "d", [0, 1, 0]), offset=0)
    holding.add("p", rec("access", 40.0, "x", [0, 2, 0]), offset=0)
    ready = holding.take("p", 30.0, 60.0, frozenset({"download"}))
    assert [e[2] for e in ready] == ["d"]
    assert holding.held["p"][0][2] == "x"


def test_a_value_has_applied_what_its_coordinates_cover_except_what_is_pending() -> None:
    holding = Holding()
    holding.add("k", rec("push", 10.0, "late", [2, 4, 0]), offset=1)  # held, below what the key applied
    holding.add("k", rec("push", 99.0, "new", [2, 9, 0]), offset=1)  # held, above it
    coords = {"2": [6, 0]}
    value = {"src": coords, PEND: holding.pending("k", coords)}
    assert value[PEND] == [[2, 4, 0]]
    assert [applied(value, src, "src") for src in ([2, 3, 0], [2, 4, 0], [2, 6, 0], [2, 6, 1], [2, 9, 0],
                                                      [5, 1, 0])] == [True, False, True, False, False, False]
