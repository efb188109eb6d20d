"""Batching between the stages: messages, partitions, the table view and its flush."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest

from streams.worker.batching import (
    CHUNK_BYTES,
    MARKER_PREFIX,
    BatchView,
    decode_records,
    encode_lines,
    flush_views,
    is_marker,
    partition_for,
)


def test_partition_for_is_stable_across_processes() -> None:
    """crc32, not hash(): the ingest of one worker and the agents of another must agree."""
    assert [partition_for(k, 8) for k in ("acme/app", "acme/lib", "11", "66")] == [0, 3, 7, 3]


def test_encoded_lines_decode_back_and_stay_under_the_chunk_size() -> None:
    records = [{"i": i, "pad": "x" * 1000} for i in range(600)]
    messages = encode_lines(records)
    assert len(messages) == 3 and all(len(m) <= CHUNK_BYTES for m in messages)
    decoded = [record for m in messages for record, _ in decode_records(m)]
    assert decoded == records


def test_a_bad_line_decodes_alone() -> None:
    assert decode_records(b'{"a": 1}\n{oops\n{"b": 2}') == [({"a": 1}, b'{"a": 1}'), (None, b"{oops"),
                                                            ({"b": 2}, b'{"b": 2}')]


class FakeTable:
    """Enough of a Faust Table: `.data` and a changelog topic whose app's producer records sends."""

    def __init__(self) -> None:
        self.data: dict[str, Any] = {"kept": 1, f"{MARKER_PREFIX}0": 3}
        self.sent: list[tuple[str, Any, Any, int | None]] = []
        self.changelog_topic = self
        self.app = self
        self.producer = self

    def get_topic_name(self) -> str:
        return "t-changelog"

    async def send(self, topic: str, key: bytes, value: bytes | None, partition: int | None, *_: Any) -> Any:
        self.sent.append((topic, orjson.loads(key), None if value is None else orjson.loads(value), partition))
        done = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done


def test_view_reads_through_writes_back_once_and_hides_markers() -> None:
    table = FakeTable()
    view = BatchView(table)
    assert (view.get("kept"), view.get("absent", "d"), "kept" in view) == (1, "d", True)
    view["new"] = {"n": 1}
    view["new"] = {"n": 2}  # written once, with the last value
    del view["kept"]
    with pytest.raises(KeyError):
        view["kept"]  # noqa: B018
    assert list(view) == ["new"] and len(view) == 1
    assert is_marker(f"{MARKER_PREFIX}0") and not is_marker("new")
    written = asyncio.run(flush_views({3: view}))
    assert written == 2
    assert sorted(table.sent[:2], key=str) == [("t-changelog", "kept", None, 3), ("t-changelog", "new", {"n": 2}, 3)]
    assert table.sent[2:] == [("t-changelog", f"{MARKER_PREFIX}3", 2, 3)]  # alone, after the writes
    assert table.data == {"new": {"n": 2}, f"{MARKER_PREFIX}0": 3}


def test_a_flush_without_changes_sends_nothing() -> None:
    table = FakeTable()
    view = BatchView(table)
    view.get("kept")
    assert asyncio.run(flush_views({0: view})) == 0
    assert table.sent == []


def test_the_marker_says_the_stage_offset_expected_next_once_the_writes_are_stored() -> None:
    """With `following` (streams.worker.continuity), the marker also says the stage offset the partition
    expects next — in the changelog and in the table, where the next batch or a recovery reads it."""
    table = FakeTable()
    view = BatchView(table)
    view["new"] = {"n": 1}
    assert asyncio.run(flush_views({2: view}, {2: 41})) == 1
    assert table.sent == [("t-changelog", "new", {"n": 1}, 2),
                          ("t-changelog", f"{MARKER_PREFIX}2", {"written": 1, "next": 41}, 2)]
    assert table.data[f"{MARKER_PREFIX}2"] == {"written": 1, "next": 41}
