"""Batching between the stages: messages, partitions, the table view and its flush."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest
from aiokafka.producer.message_accumulator import BatchBuilder
from aiokafka.record.default_records import DefaultRecordBatch

from streams.worker.batching import (
    CHUNK_BYTES,
    MARKER_PREFIX,
    BatchView,
    decode_records,
    encode_lines,
    flush_views,
    is_marker,
    partition_for,
    send_records,
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


class BatchingProducer:
    """aiokafka's producer as `send_records` uses it (`create_batch`, `send_batch`), with aiokafka's
    own batch builder of a given size; records each batch sent, decoded."""

    def __init__(self, batch_size: int) -> None:
        self.batch_size = batch_size
        self.batches: list[tuple[str, int, list[tuple[bytes, bytes | None]]]] = []

    def create_batch(self) -> BatchBuilder:
        return BatchBuilder(self.batch_size, 0)

    async def send_batch(self, batch: BatchBuilder, topic: str, *, partition: int) -> Any:
        self.batches.append((topic, partition, _records(batch)))
        done = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done


def _records(batch: BatchBuilder) -> list[tuple[bytes, bytes | None]]:
    reader = DefaultRecordBatch(bytearray(batch._build()))
    return [(bytes(r.key), None if r.value is None else bytes(r.value)) for r in reader]


class BatchedTable(FakeTable):
    """A table whose app's producer is Faust's aiokafka driver, started: `_producer` is aiokafka's."""

    def __init__(self, batch_size: int) -> None:
        super().__init__()
        self.kafka = self._producer = BatchingProducer(batch_size)


def test_a_flush_sends_its_records_in_whole_batches_then_the_marker_alone() -> None:
    """Hundreds of changed keys go as a few record batches (not a send each), in full, each batch
    within the producer's batch size; the marker follows alone."""
    table = BatchedTable(batch_size=16 * 1024)
    view = BatchView(table)
    for i in range(300):
        view[f"k{i:03}"] = {"pad": "x" * 200, "i": i}
    del view["kept"]
    assert asyncio.run(flush_views({5: view}, {5: 7})) == 301
    batches = table.kafka.batches
    assert len(batches) == 5 and {(t, p) for t, p, _ in batches} == {("t-changelog", 5)}
    sent = sorted((orjson.loads(k), None if v is None else orjson.loads(v)) for _, _, rs in batches for k, v in rs)
    assert sent == sorted([("kept", None)] + [(f"k{i:03}", {"pad": "x" * 200, "i": i}) for i in range(300)],
                          key=lambda kv: kv[0])
    assert table.sent == [("t-changelog", f"{MARKER_PREFIX}5", {"written": 301, "next": 7}, 5)]


def test_a_record_larger_than_a_batch_goes_in_a_batch_of_its_own() -> None:
    table = BatchedTable(batch_size=1024)
    big, small = {"pad": "y" * 5000}, {"n": 1}
    futures = asyncio.run(_send(table, [(b'"a"', orjson.dumps(small)), (b'"b"', orjson.dumps(big)),
                                        (b'"c"', orjson.dumps(small))]))
    assert futures == 3
    assert [[orjson.loads(k) for k, _ in rs] for _, _, rs in table.kafka.batches] == [["a"], ["b"], ["c"]]


async def _send(table: BatchedTable, records: list[tuple[bytes, bytes | None]]) -> int:
    return len(await asyncio.gather(*await send_records(table, 0, records)))
