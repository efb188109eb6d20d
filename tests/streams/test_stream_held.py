"""The one holding of held events (`streams.eventtime.Holding`: the replay's and every stage
partition's): buckets of whole seconds must release exactly what a heap of the same entries would —
the entries before the mark, never one at it — in the same order, whatever the times, ties and
marks."""

from __future__ import annotations

import heapq
import json
from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st
from streamkit import limits

from streams.eventtime import FIRST, Holding
from streams.replay import replay_lines

from conftest import examples

TIMES = st.one_of(
    st.just(FIRST),  # a snapshot record: before everything
    st.floats(min_value=-5.0, max_value=5.0, allow_nan=False),  # negative times truncate toward 0
    st.integers(min_value=-3, max_value=4).map(float),  # exactly on a bucket's edge
)

KINDS = st.sampled_from(["a", "b"])
MARKS = st.one_of(st.floats(min_value=-6.0, max_value=6.0, allow_nan=False), st.just(float("inf")),
                  st.just(FIRST), st.integers(min_value=-3, max_value=4).map(float))


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(st.tuples(st.lists(st.tuples(TIMES, KINDS, st.sampled_from(["", "1", "2"])), max_size=12),
                          MARKS), max_size=8))
def test_buckets_release_what_a_heap_releases(rounds: list[tuple[list[tuple[float, str, str]], float]]) -> None:
    held, heap = Holding(), []
    seq = 0
    for arrivals, mark in rounds:  # some entries arrive, then the watermark says `mark`
        for ts, kind, ident in arrivals:
            seq += 1
            entry = (ts, kind, ident, seq, {"n": seq}, seq)
            held.add(entry)
            heapq.heappush(heap, entry)
        expected = []
        while heap and heap[0][0] < mark:
            expected.append(heapq.heappop(heap))
        assert held.due(mark) == expected
        assert len(held) == len(heap)
    assert held.due(float("inf")) == sorted(heap)


def test_a_partly_released_bucket_keeps_its_later_entries_in_order() -> None:
    held = Holding()
    for seq, ts in enumerate([10.9, 10.1, 10.5, 11.0, 9.99], start=1):
        held.add((ts, "t", "", seq, {}, seq))
    assert [entry[0] for entry in held.due(10.5)] == [9.99, 10.1]  # not 10.5: at the mark, it waits
    held.add((10.2, "t", "", 6, {}, 6))  # late: before the mark that already passed it
    assert [entry[0] for entry in held.due(10.5)] == [10.2]
    assert [entry[0] for entry in held.due(11.0)] == [10.5, 10.9]
    assert [entry[0] for entry in held.due(float("inf"))] == [11.0]


def _download(user: int, project: int, second: float) -> bytes:
    at = datetime.fromtimestamp(1_748_854_800 + second, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return json.dumps({"id": f"{user}-{project}-{second}", "event_type": "repository_download_operation",
                       "author_id": user, "author_name": f"user {user}", "ip_address": "10.0.0.1",
                       "entity_type": "Project", "entity_path": f"g/p{project}", "entity_id": project,
                       "created_at": at}).encode() + b"\n"


def test_a_lateness_longer_than_the_users_horizon_changes_no_finding() -> None:
    """Found by the worker's bench at a lateness of 2,000 s: the replay dropped users idle past the
    horizon (600 s, the mass-download window) at the new watermark *before* applying the events it
    released — events up to the lateness older than that watermark. User 7 downloads ten projects
    in the first 10 s and an eleventh at 500 s: a mass download. User 8's event at 2,015 s moves
    the watermark to 15 s; at the end of the input user 7's 500 s event was released after user 7
    had been dropped as idle since 9 s, and the alert was lost. Without late events the findings
    cannot depend on the lateness."""
    lines = [_download(7, n, float(n)) for n in range(10)] + [_download(7, 10, 500.0), _download(8, 99, 2015.0)]
    reference = replay_lines(lines, limits(allowed_lateness=60))
    longer = replay_lines(lines, limits(allowed_lateness=2000))
    assert [f["id"] for f in reference["findings"]] == ["mass_download:7:2025-06-02T09:00:00.000Z"]
    assert longer["findings"] == reference["findings"]
    assert [longer["stats"][name] for name in ("late", "users", "users_expired")] == [0, 1, 1]  # 7, after it
