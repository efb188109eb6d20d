"""The replay's holding (`streams.engine.Held`): buckets of whole seconds must release exactly what a
heap of the same entries would, in the same order, whatever the times, ties and marks."""

from __future__ import annotations

import heapq

from hypothesis import given, settings
from hypothesis import strategies as st

from streams.engine import Held
from streams.eventtime import FIRST

TIMES = st.one_of(
    st.just(FIRST),  # a snapshot record: before everything
    st.floats(min_value=-5.0, max_value=5.0, allow_nan=False),  # negative times truncate toward 0
    st.integers(min_value=-3, max_value=4).map(float),  # exactly on a bucket's edge
)
KINDS = st.sampled_from(["a", "b"])
MARKS = st.one_of(st.floats(min_value=-6.0, max_value=6.0, allow_nan=False), st.just(float("inf")),
                  st.just(FIRST), st.integers(min_value=-3, max_value=4).map(float))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.lists(st.tuples(TIMES, KINDS, st.sampled_from(["", "1", "2"])), max_size=12),
                          MARKS), max_size=8))
def test_buckets_release_what_a_heap_releases(rounds: list[tuple[list[tuple[float, str, str]], float]]) -> None:
    held, heap = Held(), []
    seq = 0
    for arrivals, mark in rounds:  # some entries arrive, then the watermark says `mark`
        for ts, kind, ident in arrivals:
            seq += 1
            entry = (ts, kind, ident, seq, {"n": seq}, seq)
            held.add(entry)
            heapq.heappush(heap, entry)
        expected = []
        while heap and heap[0][0] <= mark:
            expected.append(heapq.heappop(heap))
        assert held.due(mark) == expected
        assert len(held) == len(heap)
    assert held.due(float("inf")) == sorted(heap)


def test_a_partly_released_bucket_keeps_its_later_entries_in_order() -> None:
    held = Held()
    for seq, ts in enumerate([10.9, 10.1, 10.5, 11.0, 9.99], start=1):
        held.add((ts, "t", "", seq, {}, seq))
    assert [entry[0] for entry in held.due(10.5)] == [9.99, 10.1, 10.5]
    held.add((10.2, "t", "", 6, {}, 6))  # late: before the mark that already passed it
    assert [entry[0] for entry in held.due(10.5)] == [10.2]
    assert [entry[0] for entry in held.due(11.0)] == [10.9, 11.0]
    assert held.due(float("inf")) == []
