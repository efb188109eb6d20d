"""Fewer, bigger writes: what makes the worker fast on Kafka (and on the embedded broker).

* `BatchView` puts a mapping in front of a Faust Table: the detectors read and write it like a
  dict, and at the end of a batch each changed key is written once — one changelog record per
  key per batch instead of one per event.
* Events travel between the stages as newline-delimited JSON, one message per destination
  partition per batch (chunked below Kafka's default 1 MB message limit), instead of one
  message per event.
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Iterable, Iterator, MutableMapping
from typing import Any, NamedTuple

import orjson

CHUNK_BYTES = 256 * 1024
MARKER_PREFIX = "__sunset_tail__/"
OWN_PREFIX = "__sunset_"  # keys sunset writes into a table besides state: flush markers, progress (streams.eventtime)
_UNCACHED = object()  # not read yet
_ABSENT = object()  # read (or deleted): not in the table


async def send_raw(topic: Any, value: bytes | None, key: bytes | None = None, partition: int | None = None) -> Any:
    """Bytes straight to the app's producer; the delivery future.

    Faust's `Topic.send` builds several objects and serializes per message, which costs more than
    the detectors spend on an event.
    """
    return await topic.app.producer.send(topic.get_topic_name(), key, value, partition, None, None)


async def send_records(topic: Any, partition: int, records: Iterable[tuple[bytes, bytes | None]]) -> list[Any]:
    """(key, value) records to one partition of `topic` in whole record batches (each up to the
    producer's batch size); the batches' delivery futures.

    Appending to a batch costs a fraction of a send per record (a future, a lock, metadata and
    partition checks each time), and a flush writes hundreds of keys. Without a started aiokafka
    producer behind Faust's (another transport, or none started), they are sent one by one.
    """
    kafka = getattr(topic.app.producer, "_producer", None)
    if kafka is None:
        return [await send_raw(topic, value, key, partition) for key, value in records]
    name = topic.get_topic_name()
    futures, batch = [], kafka.create_batch()
    for key, value in records:
        if batch.append(timestamp=None, key=key, value=value) is None:  # full: its records go, a new one starts
            futures.append(await kafka.send_batch(batch, name, partition=partition))
            batch = kafka.create_batch()
            batch.append(timestamp=None, key=key, value=value)  # an empty batch takes any one record
    if batch.record_count():
        futures.append(await kafka.send_batch(batch, name, partition=partition))
    return futures


def partition_for(key: str, partitions: int) -> int:
    """The stage partition of a key: stable across processes and Python versions."""
    return zlib.crc32(key.encode()) % partitions


def encode_lines(records: Iterable[dict[str, Any]]) -> list[bytes]:
    """Records as newline-delimited JSON messages of at most ~CHUNK_BYTES each."""
    return chunk_lines(map(orjson.dumps, records))


def chunk_lines(lines: Iterable[bytes]) -> list[bytes]:
    """JSON lines as newline-delimited messages of at most ~CHUNK_BYTES each (a longer line alone)."""
    out: list[bytes] = []
    chunk: list[bytes] = []
    size = 0
    for line in lines:
        if chunk and size + len(line) > CHUNK_BYTES:
            out.append(b"\n".join(chunk))
            chunk, size = [], 0
        chunk.append(line)
        size += len(line) + 1
    if chunk:
        out.append(b"\n".join(chunk))
    return out


class NotJSON(NamedTuple):
    """A line of a stage message that is not JSON (sunset never writes one)."""

    line: bytes


def decode_records(message: bytes) -> list[Any]:
    """A stage message's records, one per line; a line that is not JSON comes back as `NotJSON`.

    One `orjson.loads` over the whole message (as an array) is much cheaper than one per line, and
    needs no copy of each line; the line of a record is cut out only for its dead letter
    (`payload_of`). A message that is not one JSON value per line — a bad line, a blank one, a line
    holding two values — is decoded line by line.
    """
    try:
        records = orjson.loads(b"[" + message.replace(b"\n", b",") + b"]")
    except orjson.JSONDecodeError:
        records = None
    if type(records) is list and len(records) == message.count(b"\n") + 1:
        return records
    out: list[Any] = []
    for line in message.split(b"\n"):
        try:
            out.append(orjson.loads(line))
        except orjson.JSONDecodeError:
            out.append(NotJSON(line))
    return out


def payload_of(message: bytes, index: int, record: Any) -> bytes:
    """What a record's dead letter carries: its line of the stage message — or, for a message whose
    values do not follow its lines (no message sunset writes), the record as decoded."""
    if type(record) is NotJSON:
        return record.line
    lines = message.split(b"\n")
    if index < len(lines):
        try:
            if orjson.loads(lines[index]) == record:
                return lines[index]
        except orjson.JSONDecodeError:
            pass  # the record spans lines: said as decoded
    return orjson.dumps(record)


def is_marker(key: Any) -> bool:
    """Keys that are not a project's or a user's state: `BatchView.mark`'s flush markers and the
    stage partitions' progress records (`streams.eventtime.progress_key`)."""
    return isinstance(key, str) and key.startswith(OWN_PREFIX)


class BatchView(MutableMapping[str, Any]):
    """A table seen through a per-batch cache; `flush_views` writes each changed key once.

    `table` is a Faust Table. Writes go to the changelog partition the batch came from — the
    stage topic's partition, which owns the key — so recovery puts every key back on the worker
    that owns it. Each flush waits until its records are stored, then writes one more, small
    record alone: a changelog partition never ends in a multi-record batch. (The embedded Tansu
    broker reports the end offset of a partition ending in a multi-record batch as that batch's
    first offset + 1, and Faust's recovery stops there; see docs/streams.md.)
    """

    def __init__(self, table: Any) -> None:
        self._table = table
        mapping = getattr(table.data, "mapping", None)  # the in-memory store's dict (streams.worker.store)
        self._data: Any = table.data if mapping is None else mapping()
        self._cache: dict[str, Any] = {}
        self._dirty: set[str] = set()

    def __getitem__(self, key: str) -> Any:
        value = self.get(key, _ABSENT)
        if value is _ABSENT:
            raise KeyError(key)
        return value

    def get(self, key: str, default: Any = None) -> Any:
        """Like dict.get — without the KeyError round trip of Mapping.get."""
        value = self._cache.get(key, _UNCACHED)
        if value is _UNCACHED:
            value = self._cache[key] = self._data.get(key, _ABSENT)
        return default if value is _ABSENT else value

    def __setitem__(self, key: str, value: Any) -> None:
        self._cache[key] = value
        self._dirty.add(key)

    def __delitem__(self, key: str) -> None:
        self[key]  # noqa: B018 - KeyError when absent, like a dict
        self._cache[key] = _ABSENT
        self._dirty.add(key)

    def __iter__(self) -> Iterator[str]:
        keys = set(self._table.data.keys()) | set(self._cache)
        return iter(sorted(k for k in keys if not is_marker(k) and self.get(k, _ABSENT) is not _ABSENT))

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def changed(self) -> list[str]:
        """The keys written or deleted since the last flush."""
        return list(self._dirty)

    async def write(self, partition: int) -> tuple[int, list[Any]]:
        """Write the changed keys to the table and send them to its changelog: how many, and the
        send futures.

        Keys and values are JSON as the table's codec writes them (Faust reads them back on recovery).
        Each key is stored, then encoded and handed to the producer's batch, one at a time: orjson
        (from 3.12) gives every result a buffer of at least 4 KiB, so a flush that encoded every
        changed key first would hold ~8 KiB per key until the last was encoded.
        """
        data, dumps, cache = self._data, orjson.dumps, self._cache
        dirty, self._dirty = self._dirty, set()
        put = getattr(data, "put_encoded", None)  # the RocksDB store keeps the bytes (streams.worker.store.Store)

        def records() -> Iterator[tuple[bytes, bytes | None]]:
            for key in dirty:
                value = cache[key]
                if value is _ABSENT:
                    data.pop(key, None)
                    yield dumps(key), None
                else:
                    raw = dumps(value)
                    if put is None:
                        data[key] = value
                    else:
                        put(key, value, raw)
                    yield dumps(key), raw

        return len(dirty), await send_records(self._table.changelog_topic, partition, records())

    async def mark(self, partition: int, written: int, following: int | None = None,
                   extra: dict[str, Any] | None = None) -> Any:
        """The single-record batch that ends a flush of `partition` (send it once the writes are
        stored): the number of records written, and, when given, the stage offset the partition
        expects next (`streams.worker.continuity`) and `extra` (where the events still held are, and how
        far the watermarks had released: `streams.worker.agents`) — stored only once the state they follow is."""
        key = orjson.dumps(f"{MARKER_PREFIX}{partition}")
        value: Any = written
        if following is not None:
            value = {"written": written, "next": following, **(extra or {})}
            self._table.data[f"{MARKER_PREFIX}{partition}"] = value
        return await send_raw(self._table.changelog_topic, orjson.dumps(value), key, partition)


async def flush_views(views: dict[int, BatchView], following: dict[int, int | None] | None = None,
                      extra: dict[int, dict[str, Any]] | None = None) -> int:
    """Write every view's changes, wait until the broker has them, then end each partition with a
    marker (saying the offset it expects next, from `following`, and what `extra` has for it)."""
    written: dict[int, int] = {}
    pending = []
    for partition, view in views.items():
        count, sends = await view.write(partition)
        if count:
            written[partition] = count
            pending += sends
    await asyncio.gather(*pending)
    following, extra = following or {}, extra or {}
    markers = [await views[p].mark(p, n, following.get(p), extra.get(p)) for p, n in written.items()]
    await asyncio.gather(*markers)
    return sum(written.values())
