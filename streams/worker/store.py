"""Where the worker's tables live: sunset's own stores behind Faust's `Table`.

`memory://` (`MemoryStore`): in memory, rebuilt from the changelogs at every start — by a plain
consumer of sunset's, not by Faust's recovery (see the class). `rocksdb://` (`Store`): in RocksDB
(rocksdict) under the data dir, so a restart reads only the changelogs' tail.

Faust's own RocksDB store does not work for sunset as it is (faust-streaming 0.15):

* `Store._set` asserts that a Faust event is current and writes the key into the database of
  that event's partition. sunset's agents take batches (`noack_take`, filled by a background
  task), and `streams.worker.batching.BatchView` writes a batch's keys at its end, from the agent's task,
  where no event is current: the first write is an AssertionError and the worker crashes.
* It records how far each changelog partition is applied (`set_persisted_offset`) only for
  records it sent itself (`Table._send_changelog`) or replayed; sunset sends its changelog
  records straight to the producer (`streams.worker.batching.send_records`), so a restart would replay
  everything written since the previous start.

`Store` puts a key in the database of the changelog partition sunset writes it to: the stage
partition of its key (`streams.worker.batching.partition_for`), or, for sunset's own keys
(`__sunset_…/<partition>`: flush markers, progress), the partition their name ends with. `Table`
records, every `PERSIST_EVERY` seconds while the worker is ready (recovered, no rebalance), each
active changelog partition's end offset as applied: every record on a changelog partition was
given to the store before it was sent (BatchView stores, then sends), and the store writes every
change it holds of a partition to its database before recording its offset, so everything below
the end offset is in the database. On a restart Faust reads each changelog from there.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from typing import Any

import faust
import orjson
from aiokafka import AIOKafkaConsumer, TopicPartition
from faust.stores import memory, rocksdb
from faust.types import TP
from mode import Service
from yarl import URL

from streams.kafka import message_bytes, security_options
from streams.settings import StreamSettings
from streams.worker.batching import OWN_PREFIX, partition_for

_MISSING = object()
PERSIST_EVERY = 5.0  # seconds between two records of the applied changelog offsets
log = logging.getLogger("sunset.stream.store")


def key_partition(key: bytes, partitions: int) -> int:
    """The changelog partition sunset writes a table key to (the key as the table encodes it: JSON)."""
    name = orjson.loads(key)
    if isinstance(name, str) and name.startswith(OWN_PREFIX):
        return int(name.rsplit("/", 1)[1])
    return partition_for(name, partitions)


class Store(rocksdb.Store):
    """Faust's RocksDB store, each key in its changelog partition's database (see the module).

    Keys and values are stored as the changelog carries them (orjson, `streams.worker.batching`), so a
    record recovered from the changelog and one written by the worker are the same bytes.

    RocksDB is where the state lives; reading it is kept off the worker's path:

    * the last `CACHED` values read or written are kept decoded, by decoded key: a read that hits
      them encodes and decodes nothing (Faust's codec — stdlib json, then a walk looking for Faust
      records — would cost more than the detectors). A value handed out is the one the cache holds,
      as with the in-memory store.
    * each partition's keys are kept decoded in memory (`_keys`), read from its database at its first
      use, then kept up to date by every write, delete and changelog record applied here. A key
      that is not there is absent without a database read, and `keys()`, `items()`, `len()` (the
      views, `/metrics`, the actor sweep) walk them instead of decoding every key of the
      database, and take the values the cache has: only the others are read and decoded.
    * a write stays in memory (`_dirty`) until its partition's applied changelog offset is
      recorded (`set_persisted_offset`, every `PERSIST_EVERY` s), the value leaves the cache or a
      partition is revoked: then the key's latest value is written once, however many batches
      changed it meanwhile. (A flush changes a key's whole value, often kilobytes: written through,
      each batch would pay the WAL, the memtable and the compactions that follow.) What a stop or
      a SIGKILL leaves unwritten was not recorded as applied: the restart reads it from the
      changelog, from the offset recorded after the writes it covers.
    * what is written is the value *as it was stored*, encoded then (`put_encoded`: the bytes its
      changelog record carries), not the object the cache holds: the stages change that object in
      place while the next batch runs, and a value half-way through a batch — records applied
      that no changelog record has yet, without the held records below its source coordinates
      (`streams.worker.agents.Held.pend`) — would, once its offset is recorded, make a restart
      skip records as applied that never were.

    The changelog records that recovery or a standby applies replace what the cache holds of their keys.
    """

    CACHED = 65_536

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._values: OrderedDict[Any, Any] = OrderedDict()  # decoded key -> decoded value, least recent first
        self._keys: dict[int, dict[Any, None]] = {}  # partition -> its keys (decoded), in database then write order
        self._dirty: dict[int, dict[Any, bytes]] = {}  # partition -> key -> value as stored, not yet in its database

    def _remember(self, key: Any, value: Any) -> None:
        values = self._values
        values[key] = value
        values.move_to_end(key)
        if len(values) > self.CACHED:
            old, _ = values.popitem(last=False)
            partition = self._partition_of(old)
            dirty = self._dirty.get(partition)
            stored = None if dirty is None else dirty.pop(old, None)
            if stored is not None:
                self._db_for_partition(partition).put(orjson.dumps(old), stored)

    def _write_dirty(self, partition: int, keys: Iterable[Any] | None = None) -> int:
        """Write a partition's changed keys (`keys` of them: all by default) to its database; how many."""
        dirty = self._dirty.get(partition)
        if not dirty:
            return 0
        todo = list(dirty) if keys is None else [key for key in keys if key in dirty]
        db = self._db_for_partition(partition)
        for key in todo:
            db.put(orjson.dumps(key), dirty.pop(key))
        return len(todo)

    def _write_all_dirty(self) -> None:
        for partition in list(self._dirty):
            self._write_dirty(partition)
        self._dirty.clear()

    async def write_changes(self, partition: int, slice_size: int = 500) -> int:
        """Write a partition's changed keys to its database in slices, the event loop served between
        them; how many (`set_persisted_offset` writes those changed meanwhile)."""
        todo = list(self._dirty.get(partition, ()))
        for start in range(0, len(todo), slice_size):
            self._write_dirty(partition, todo[start:start + slice_size])
            await asyncio.sleep(0)
        return len(todo)

    def set_persisted_offset(self, tp: TP, offset: int) -> None:
        """Record `offset` as applied to the partition's database, once every change made here is in it."""
        self._write_dirty(tp.partition)
        super().set_persisted_offset(tp, offset)

    def _partition_of(self, key: Any) -> int:
        """The changelog partition, and database, of a (decoded) key: `key_partition` without the decoding."""
        if isinstance(key, str) and key.startswith(OWN_PREFIX):
            return int(key.rsplit("/", 1)[1])
        return partition_for(key, self.table.partitions or self.app.conf.topic_partitions)

    def _keys_of(self, partition: int) -> dict[Any, None]:
        """The keys of a partition's database, read from it on first use."""
        keys = self._keys.get(partition)
        if keys is None:
            offset_key = self.offset_key
            keys = self._keys[partition] = dict.fromkeys(
                orjson.loads(raw) for raw in self._db_for_partition(partition).keys()  # noqa: SIM118 - an Rdict
                if raw != offset_key)
        return keys

    def _active_partitions(self) -> list[int]:
        """The partitions whose keys this worker shows (as Faust's `_dbs_for_actives`)."""
        if self.table.is_global:
            return list(self._dbs)
        topic = self.table.changelog_topic.get_topic_name()
        actives = self.app.assignor.assigned_actives()
        return [p for p in self._dbs if TP(topic, p) in actives]

    def get(self, key: Any, default: Any = None) -> Any:
        value = self._values.get(key, _MISSING)
        if value is not _MISSING:
            self._values.move_to_end(key)
            return value
        partition = self._partition_of(key)
        if key not in self._keys_of(partition):
            return default
        raw = self._db_for_partition(partition).get(orjson.dumps(key))
        if raw is None:
            return default
        value = orjson.loads(raw)
        self._remember(key, value)
        return value

    def __getitem__(self, key: Any) -> Any:
        value = self.get(key, _MISSING)
        if value is _MISSING:
            raise KeyError(key)
        return value

    def __contains__(self, key: object) -> bool:
        return key in self._values or key in self._keys_of(self._partition_of(key))

    def __setitem__(self, key: Any, value: Any) -> None:
        self.put_encoded(key, value, orjson.dumps(value))

    def put_encoded(self, key: Any, value: Any, raw: bytes) -> None:
        """Store `value`, whose encoding (as its changelog record carries it) is `raw`: what the
        database gets, whatever becomes of the object meanwhile (see the class)."""
        partition = self._partition_of(key)
        self._keys_of(partition)[key] = None
        dirty = self._dirty.get(partition)
        if dirty is None:
            dirty = self._dirty[partition] = {}
        dirty[key] = bytes(memoryview(raw))  # a copy of its size: orjson's results hold at least 4 KiB each
        self._remember(key, value)

    def __delitem__(self, key: Any) -> None:
        partition = self._partition_of(key)
        self._values.pop(key, None)
        self._keys_of(partition).pop(key, None)
        self._dirty.get(partition, {}).pop(key, None)
        self._db_for_partition(partition).delete(orjson.dumps(key))

    def _keys_decoded(self) -> Iterator[Any]:
        for partition in self._active_partitions():
            yield from list(self._keys_of(partition))  # a copy: writes may come between two keys

    def _items_decoded(self) -> Iterator[tuple[Any, Any]]:
        for partition in self._active_partitions():
            db = self._db_for_partition(partition)
            for key in list(self._keys_of(partition)):
                value = self._values.get(key, _MISSING)
                if value is _MISSING:  # read, not remembered: a walk over everything would empty the cache
                    raw = db.get(orjson.dumps(key))
                    if raw is None:
                        continue
                    value = orjson.loads(raw)
                yield key, value

    def _values_decoded(self) -> Iterator[Any]:
        for _, value in self._items_decoded():
            yield value

    def __iter__(self) -> Iterator[Any]:
        return self._keys_decoded()

    def _size(self) -> int:
        return sum(len(self._keys_of(partition)) for partition in self._active_partitions())

    def _encode_key(self, key: Any) -> bytes:
        return orjson.dumps(key)

    def _encode_value(self, value: Any) -> bytes | None:
        return None if value is None else orjson.dumps(value)

    def _decode_key(self, key: bytes | None) -> Any:
        return None if key is None else orjson.loads(key)

    def _decode_value(self, value: bytes | None) -> Any:
        return None if value is None else orjson.loads(value)

    def apply_changelog_batch(self, batch: Iterable[Any], *args: Any, **kwargs: Any) -> None:
        events = list(batch)
        for event in events:
            message = event.message
            try:
                key = orjson.loads(message.key)
            except orjson.JSONDecodeError:  # not a key sunset wrote: forget what is known of its partition
                log.warning("%s: changelog key %r at %s:%d is not JSON", self.table.name, message.key[:100],
                            message.partition, message.offset)
                self._write_all_dirty()
                self._values.clear()
                self._keys.pop(message.partition, None)
                continue
            self._values.pop(key, None)
            self._dirty.get(message.partition, {}).pop(key, None)
            keys = self._keys.get(message.partition)
            if keys is not None:
                if message.value is None:
                    keys.pop(key, None)
                else:
                    keys[key] = None
        super().apply_changelog_batch(events, *args, **kwargs)

    def revoke_partitions(self, table: Any, tps: Any) -> None:
        self._write_all_dirty()
        self._values.clear()
        for tp in tps:
            if tp.topic in table.changelog_topic.topics:
                self._keys.pop(tp.partition, None)
        super().revoke_partitions(table, tps)

    def reset_state(self) -> None:
        self._values.clear()
        self._keys.clear()
        self._dirty.clear()
        super().reset_state()

    def _partition_db(self, key: bytes) -> Any:
        return self._db_for_partition(key_partition(key, self.table.partitions or self.app.conf.topic_partitions))

    def _set(self, key: bytes, value: bytes | None) -> None:
        self._keys.pop(key_partition(key, self.table.partitions or self.app.conf.topic_partitions), None)
        self._partition_db(key).put(key, value)

    def _get(self, key: bytes) -> bytes | None:
        value: bytes | None = self._partition_db(key).get(key)
        return value

    def _contains(self, key: bytes) -> bool:
        return self._get(key) is not None

    def _del(self, key: bytes) -> None:
        self._keys.pop(key_partition(key, self.table.partitions or self.app.conf.topic_partitions), None)
        self._partition_db(key).delete(key)


class MemoryStore(memory.Store[Any, Any]):
    """Faust's in-memory store, recovered by sunset instead of by Faust's recovery.

    Faust's recovery hands each changelog record through its consumer, its conductor and a queue
    and applies it with its codec: about a thousand records a second here, so a restart on a long
    changelog took minutes before `/ready`. Before Faust's recovery starts (`on_rebalance`), this
    store reads each active changelog partition of its table with a plain consumer from where it
    last stopped to the end offset, decodes keys and values with orjson (as `BatchView` writes
    them) and applies them; `persisted_offset` then tells Faust's recovery that everything below
    the end offset is applied, so it reads only what came after.
    """

    def __post_init__(self) -> None:
        super().__post_init__()
        self.loaded: dict[TP, int] = {}  # changelog partition -> the last offset applied here

    def persisted_offset(self, tp: TP) -> int | None:
        return self.loaded.get(tp)

    def mapping(self) -> dict[Any, Any]:
        """The dict behind the store, for `BatchView`'s reads and writes: the store's own methods
        (Faust's `FastUserDict`, then `Mapping.get`) cost several Python calls per key."""
        return self.data  # type: ignore[return-value]

    async def on_rebalance(self, assigned: Any, revoked: Any, newly_assigned: Any, generation_id: int = 0) -> None:
        topic = self.table.changelog_topic.get_topic_name()
        actives = sorted(tp for tp in self.app.assignor.assigned_actives() if tp.topic == topic)
        if actives:
            await load_changelog(self, actives)

    async def on_recovery_completed(self, active_tps: Any, standby_tps: Any) -> None:
        await super().on_recovery_completed(active_tps, standby_tps)
        for tp in [tp for tp in self.loaded if tp not in active_tps]:
            del self.loaded[tp]  # its keys are gone: load it whole if it comes back

    def apply(self, tp: TP, records: Iterable[Any]) -> None:
        """Changelog records (aiokafka's) of one partition into the table."""
        data, partitions = self.data, self._key_partition
        for record in records:
            key = orjson.loads(record.key)
            if record.value is None:
                data.pop(key, None)
                partitions.pop(key, None)
            else:
                data[key] = orjson.loads(record.value)
                partitions[key] = tp.partition


async def load_changelog(store: MemoryStore, tps: list[TP]) -> None:
    """Read `tps` (changelog partitions) from after what `store` has applied to their end offsets."""
    settings: StreamSettings = getattr(store.app, "sunset_settings")  # noqa: B009 - set by create_app, not typed by Faust
    consumer = AIOKafkaConsumer(bootstrap_servers=settings.kafka_bootstrap(), group_id=None, enable_auto_commit=False,
                                max_partition_fetch_bytes=max(4 * 1024 * 1024, message_bytes(settings)),
                                **security_options(settings))
    await consumer.start()
    try:
        kafka_tps = [TopicPartition(tp.topic, tp.partition) for tp in tps]
        consumer.assign(kafka_tps)
        ends = await consumer.end_offsets(kafka_tps)
        todo = {}
        for tp, kafka_tp in zip(tps, kafka_tps, strict=True):
            start = store.loaded.get(tp, -1) + 1
            if start < ends[kafka_tp]:
                consumer.seek(kafka_tp, start)
                todo[kafka_tp] = tp
        began, count = time.monotonic(), 0
        while todo:
            for kafka_tp, records in (await consumer.getmany(*todo, timeout_ms=1000, max_records=20_000)).items():
                store.apply(todo[kafka_tp], [r for r in records if r.offset < ends[kafka_tp]])
                count += len(records)
            for kafka_tp in [k for k in todo if await consumer.position(k) >= ends[k]]:
                store.loaded[todo.pop(kafka_tp)] = ends[kafka_tp] - 1
        if count:
            log.info("%s: %d changelog records loaded in %.1f s", store.table.name, count, time.monotonic() - began)
    finally:
        await consumer.stop()


class Table(faust.Table[Any, Any]):
    """A Faust table whose store is sunset's: `MemoryStore` for `memory://`, `Store` for `rocksdb://`
    (which records the applied changelog offsets)."""

    def _new_store_by_url(self, url: str | URL) -> Any:
        kwargs: dict[str, Any] = {
            "table_name": self.name, "key_type": self.key_type, "key_serializer": self.key_serializer,
            "value_serializer": self.value_serializer, "value_type": self.value_type, "loop": self.loop,
            "options": self.options}
        scheme = URL(str(url)).scheme
        if scheme == "memory":
            return MemoryStore(url, self.app, self, **kwargs)
        if scheme == "rocksdb":
            return Store(url, self.app, self, **kwargs)
        return super()._new_store_by_url(url)

    @Service.timer(PERSIST_EVERY)
    async def _persist_offsets(self) -> None:
        if isinstance(self.data, Store):
            try:
                await persist_applied(self.app, self)
            except Exception as exc:  # noqa: BLE001 - the broker away: try again at the next tick
                log.warning("%s: could not record the applied changelog offsets: %r", self.name, exc)


def _ready(app: Any) -> bool:
    recovery = getattr(app.tables, "recovery")  # noqa: B009 - TableManager has it; its interface type does not
    return bool(recovery.completed.is_set() and not recovery.in_recovery and not app.rebalancing)


async def persist_applied(app: Any, table: Any) -> dict[int, int]:
    """Record each active changelog partition's end offset - 1 as applied; what was recorded."""
    if not _ready(app):
        return {}
    topic = table.changelog_topic.get_topic_name()
    actives = [tp for tp in app.assignor.assigned_actives() if tp.topic == topic]
    if not actives:
        return {}
    generation = app.consumer_generation_id
    ends = await app.consumer.highwaters(*actives)
    if generation != app.consumer_generation_id or not _ready(app):
        return {}  # a rebalance began meanwhile: another worker may have written these partitions
    todo = {tp: end - 1 for tp, end in ends.items()
            if end is not None and end > 0 and table.data.persisted_offset(tp) != end - 1}
    for tp in todo:  # most of the changes, a slice at a time: set_persisted_offset writes the rest at once
        await table.data.write_changes(tp.partition)
    if generation != app.consumer_generation_id or not _ready(app):
        return {}
    done = {}
    for tp, offset in todo.items():
        table.data.set_persisted_offset(TP(tp.topic, tp.partition), offset)
        done[tp.partition] = offset
    if done:
        log.debug("%s: changelog applied up to %s", table.name, done)
    return done
