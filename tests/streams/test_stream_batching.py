"""Batching between the stages: messages, partitions, the table view and its flush."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest
from aiokafka.producer.message_accumulator import BatchBuilder
from aiokafka.record.default_records import DefaultRecordBatch
from hypothesis import given, settings
from hypothesis import strategies as st

from streams.worker.batching import (
    CHUNK_BYTES,
    MARKER_PREFIX,
    BatchView,
    NotJSON,
    decode_records,
    encode_lines,
    flush_views,
    is_marker,
    partition_for,
    payload_of,
    send_records,
)

from conftest import examples


def test_partition_for_is_stable_across_processes() -> None:
    """crc32, not hash(): the ingest of one worker and the agents of another must agree."""
    assert [partition_for(k, 8) for k in ("acme/app", "acme/lib", "11", "66")] == [0, 3, 7, 3]


def test_encoded_lines_decode_back_and_stay_under_the_chunk_size() -> None:
    records = [{"i": i, "pad": "x" * 1000} for i in range(600)]
    messages = encode_lines(records)
    assert len(messages) == 3 and all(len(m) <= CHUNK_BYTES for m in messages)
    decoded = [record for m in messages for record in decode_records(m)]
    assert decoded == records


def test_a_bad_line_decodes_alone() -> None:
    assert decode_records(b'{"a": 1}\n{oops\n{"b": 2}') == [{"a": 1}, NotJSON(b"{oops"), {"b": 2}]


@pytest.mark.parametrize(("message", "records"), [
    (b"", [NotJSON(b"")]),  # an empty message (a tombstone's value) is one line that is not JSON
    (b'{"a": 1}\n\n{"b": 2}', [{"a": 1}, NotJSON(b""), {"b": 2}]),
    (b'1, 2\n{"b": 2}', [NotJSON(b"1, 2"), {"b": 2}]),  # two values on a line: not one record each
    (b'[1,\n2]', [NotJSON(b"[1,"), NotJSON(b"2]")]),  # one value over two lines
    (b'"x"\n3\nnull', ["x", 3, None]),  # JSON, not records: the stage dead-letters each
])
def test_each_line_is_one_record_or_not_json(message: bytes, records: list[Any]) -> None:
    decoded = decode_records(message)
    assert decoded == records
    assert [payload_of(message, i, r) for i, r in enumerate(decoded)] == message.split(b"\n")


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


_scalar = (st.none() | st.booleans() | st.integers(-2**63, 2**63 - 1) | st.floats(allow_nan=False, allow_infinity=False)
           | st.text(max_size=8))
_json = st.recursive(_scalar, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                                          max_size=3), max_leaves=6)


@settings(max_examples=examples(500), deadline=None)
@given(st.lists(_json, min_size=1, max_size=6))
def test_messages_sunset_writes_decode_to_their_records(records: list[Any]) -> None:
    message = b"\n".join(orjson.dumps(r) for r in records)
    assert decode_records(message) == records


@settings(max_examples=examples(500), deadline=None)
@given(st.lists(st.binary(max_size=12) | _json.map(orjson.dumps) | st.sampled_from([b"[", b"]", b",", b'"', b"1,2"]),
                min_size=1, max_size=6).map(b"\n".join))
def test_any_message_decodes_and_each_dead_letter_keeps_its_record(message: bytes) -> None:
    """Whatever a stage message holds, it decodes; a message of one JSON value or one bad line per
    line gives each line's; and each result's dead-letter payload is its line, or its value."""
    decoded = decode_records(message)
    assert decoded
    lines = message.split(b"\n")
    per_line = []
    for line in lines:
        try:
            per_line.append(orjson.loads(line))
        except orjson.JSONDecodeError:
            per_line.append(NotJSON(line))
    if all(type(r) is not NotJSON or b"," not in r.line and b'"' not in r.line and b"[" not in r.line
           for r in per_line):
        assert decoded == per_line
    for index, record in enumerate(decoded):
        payload = payload_of(message, index, record)
        if type(record) is NotJSON:
            assert payload == record.line and payload in lines
        else:
            assert orjson.loads(payload) == record
