"""`streams.worker.store.Store` (`rocksdb://`) on a real RocksDB, no broker: the decoded values and keys it
keeps in memory agree with its databases through writes, deletes, changelog records, a small cache
and a reopen; a walk over the table hands out the values the cache holds; a key changed by several
batches is written to RocksDB once, before its partition's applied offset is recorded."""

from __future__ import annotations

import asyncio
import gc
import tempfile
from pathlib import Path
from typing import Any

import orjson
from faust import Event
from faust.assignor.client_assignment import ClientAssignment
from faust.types import TP, Message
from hypothesis import given, settings
from hypothesis import strategies as st

from streams.settings import StreamSettings
from streams.worker.app import create_app
from streams.worker.batching import MARKER_PREFIX
from streams.worker.store import Store

PARTITIONS = 4


def open_store(data_dir: Path) -> Store:
    """The projects table's store of a worker that owns every partition, its databases opened as
    Faust opens them when the partitions are assigned."""
    app = create_app(StreamSettings(store="rocksdb://", data_dir=data_dir, partitions=PARTITIONS, app_id="keys",
                                    profile="dev"))
    table = app.tables["projects"]
    topic = table.changelog_topic.get_topic_name()
    # what the consumer's assignor holds after a rebalance that gave this worker every partition
    app.assignor._assignment = ClientAssignment(actives={topic: list(range(PARTITIONS))}, standbys={})
    store = table.data
    assert isinstance(store, Store)
    asyncio.run(store.assign_partitions(table, {TP(topic, p) for p in range(PARTITIONS)}))
    return store


def close(store: Store) -> None:
    """Revoke every partition: Faust drops its databases (and collects them: RocksDB closes them)."""
    topic = store.table.changelog_topic.get_topic_name()
    store.revoke_partitions(store.table, {TP(topic, p) for p in range(PARTITIONS)})


def reassign(store: Store) -> None:
    """Every partition revoked and assigned again, as a rebalance that gives them back does."""
    close(store)
    topic = store.table.changelog_topic.get_topic_name()
    asyncio.run(store.assign_partitions(store.table, {TP(topic, p) for p in range(PARTITIONS)}))


def changelog(store: Store, records: list[tuple[Any, Any]], offset: int = 0) -> None:
    """Apply changelog records (key, value or None for a tombstone) as recovery or a standby does."""
    topic = store.table.changelog_topic.get_topic_name()
    events = []
    for i, (key, value) in enumerate(records):
        partition = store._partition_of(key)
        message = Message(topic, partition, offset + i, 0.0, 0, None, orjson.dumps(key),
                          None if value is None else orjson.dumps(value), None, tp=TP(topic, partition))
        events.append(Event(store.app, None, None, {}, message))
    store.apply_changelog_batch(events, to_key=None, to_value=None)


def record_offsets(store: Store, offset: int = 0) -> None:
    """Record every partition's changelog as applied up to `offset` (as `persist_applied` does)."""
    topic = store.table.changelog_topic.get_topic_name()
    for partition in range(PARTITIONS):
        store.set_persisted_offset(TP(topic, partition), offset)


def on_disk(store: Store) -> dict[Any, Any]:
    """Every key and value of the store's databases, read and decoded here."""
    out = {}
    for db in store._dbs.values():
        for raw_key, raw_value in db.items():
            if raw_key != store.offset_key:
                out[orjson.loads(raw_key)] = orjson.loads(raw_value)
    return out


def test_a_walk_hands_out_the_values_the_cache_holds(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    value = {"downloads": {"2026-11-27": 3}}
    store["acme/app"] = value
    store["acme/lib"] = {"downloads": {}}
    assert dict(store.items())["acme/app"] is value  # not decoded again from RocksDB
    assert next(v for v in store.values() if v == value) is value
    assert store.get("acme/app") is value and store["acme/app"] is value
    record_offsets(store)
    assert on_disk(store) == {"acme/app": value, "acme/lib": {"downloads": {}}}
    close(store)


def test_a_key_changed_by_several_batches_is_written_once_before_its_offset(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    topic = store.table.changelog_topic.get_topic_name()
    partition = store._partition_of("acme/app")
    db = store._db_for_partition(partition)
    store.set_persisted_offset(TP(topic, partition), 0)
    before = db.latest_sequence_number()
    for n in range(5):  # five batches
        store["acme/app"] = {"n": n}
    assert db.latest_sequence_number() == before and on_disk(store) == {}  # nothing written yet
    store.set_persisted_offset(TP(topic, partition), 7)
    assert db.latest_sequence_number() == before + 2  # the key's last value, then the offset
    assert on_disk(store) == {"acme/app": {"n": 4}} and store.persisted_offset(TP(topic, partition)) == 7
    store["acme/app"] = {"n": 5}
    del db  # RocksDB closes a database once nothing holds it
    close(store)  # a revoke writes what changed since
    store = open_store(tmp_path)
    assert dict(store.items()) == {"acme/app": {"n": 5}}
    close(store)


def test_keys_come_back_from_the_databases_and_follow_changelog_records(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    store["acme/app"] = {"n": 1}
    store["acme/lib"] = {"n": 2}
    store[f"{MARKER_PREFIX}3"] = {"written": 2}
    del store["acme/lib"]
    close(store)

    store = open_store(tmp_path)
    assert sorted(store.keys()) == ["__sunset_tail__/3", "acme/app"]
    assert len(store) == 2 and "acme/app" in store and "acme/lib" not in store
    assert store.get("acme/lib", "absent") == "absent" and store.get("acme/app") == {"n": 1}
    cached = store["acme/app"]
    changelog(store, [("acme/app", {"n": 10}), ("acme/new", {"n": 11}), ("__sunset_tail__/3", None)])
    assert store["acme/app"] == {"n": 10} and cached == {"n": 1}  # the record replaced the cached value
    assert dict(store.items()) == {"acme/app": {"n": 10}, "acme/new": {"n": 11}} == on_disk(store)
    close(store)


def test_a_kill_loses_only_what_the_changelog_after_the_recorded_offset_holds(tmp_path: Path) -> None:
    """Changes not yet written when the process dies are not in RocksDB, and not recorded as
    applied: recovery applies the changelog from the recorded offset on and has them again."""
    store = open_store(tmp_path)
    topic = store.table.changelog_topic.get_topic_name()
    partition = store._partition_of("acme/app")
    sent: list[tuple[Any, Any]] = []  # the changelog of `partition`, as BatchView sends it

    def flush(changes: dict[str, Any]) -> None:
        for key, value in changes.items():
            store[key] = value
            sent.append((key, value))

    keys = [k for k in (f"g/p{i}" for i in range(40)) if store._partition_of(k) == partition][:3]
    flush({keys[0]: {"n": 0}, keys[1]: {"n": 1}})
    store.set_persisted_offset(TP(topic, partition), len(sent) - 1)
    recorded = len(sent)
    flush({keys[0]: {"n": 10}, keys[2]: {"n": 2}})
    flush({keys[0]: {"n": 20}})
    store._dbs.clear()  # the process dies: RocksDB closes with what it was given, nothing more
    del store
    gc.collect()

    store = open_store(tmp_path)
    assert on_disk(store) == {keys[0]: {"n": 0}, keys[1]: {"n": 1}}
    start = store.persisted_offset(TP(topic, partition))
    assert start == recorded - 1
    changelog(store, sent[start + 1:], offset=start + 1)  # what Faust's recovery reads
    assert dict(store.items()) == {keys[0]: {"n": 20}, keys[1]: {"n": 1}, keys[2]: {"n": 2}}
    close(store)


def test_a_value_changed_in_place_after_it_was_stored_is_written_as_stored(tmp_path: Path) -> None:
    """The stages change the value objects the store hands out in place while a batch runs, and
    store them again at its flush (with the source coordinates of what they applied, and which of
    their held records are below them). What RocksDB gets is a value as it was stored — never one
    half-way through the next batch: recorded as applied, that one would say records were applied
    that the changelog never got, and a restart after a SIGKILL would skip them (downloads lost,
    accesses counted twice)."""
    store = open_store(tmp_path)
    store.CACHED = 2
    topic = store.table.changelog_topic.get_topic_name()
    partition = store._partition_of("busy/repo")
    value = {"tally": 10, "src": {"1": [100, 0]}, "pend": [[1, 90, 0]]}
    store["busy/repo"] = value  # a flush stores it
    mid_batch = store.get("busy/repo")  # the next batch reads it ...
    assert mid_batch is value
    mid_batch["tally"] = 12  # ... and applies two more records, not yet its flush's
    mid_batch["src"]["1"] = [130, 0]
    store.set_persisted_offset(TP(topic, partition), 5)  # the store records its offset meanwhile
    assert on_disk(store)["busy/repo"] == {"tally": 10, "src": {"1": [100, 0]}, "pend": [[1, 90, 0]]}
    mid_batch["tally"] = 13
    for i in range(3):  # the value leaves the small cache while the batch still changes it
        store[f"g/p{i}"] = {"i": i}
    assert on_disk(store)["busy/repo"] == {"tally": 10, "src": {"1": [100, 0]}, "pend": [[1, 90, 0]]}
    store["busy/repo"] = mid_batch  # the batch's flush
    store.set_persisted_offset(TP(topic, partition), 9)
    assert on_disk(store)["busy/repo"] == {"tally": 13, "src": {"1": [130, 0]}, "pend": [[1, 90, 0]]}
    close(store)


def test_values_past_the_cache_are_read_from_the_databases(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    store.CACHED = 2
    for i in range(6):
        store[f"p{i}"] = {"i": i}
    assert len(store._values) == 2
    assert on_disk(store) == {f"p{i}": {"i": i} for i in range(4)}  # written as they left the cache
    assert dict(store.items()) == {f"p{i}": {"i": i} for i in range(6)}
    assert len(store._values) == 2  # the walk read the others without filling the cache
    assert [store.get(f"p{i}") for i in range(6)] == [{"i": i} for i in range(6)]
    close(store)


KEYS = st.sampled_from(["a", "b", "acme/app", "g/p", "11", f"{MARKER_PREFIX}0", f"{MARKER_PREFIX}2"])
VALUES = st.one_of(st.integers(0, 3), st.dictionaries(st.sampled_from(["n", "m"]), st.integers(0, 9), max_size=2))
OPERATIONS = st.lists(st.one_of(
    st.tuples(st.just("set"), KEYS, VALUES),
    st.tuples(st.just("delete"), KEYS, st.none()),
    st.tuples(st.just("get"), KEYS, st.none()),
    st.tuples(st.just("changelog"), KEYS, st.one_of(st.none(), VALUES)),
), max_size=30)


@settings(deadline=None)
@given(operations=OPERATIONS, cached=st.integers(1, 4), reassign_at=st.integers(0, 30))
def test_the_store_reads_as_a_dict_with_the_same_writes(operations: list[tuple[str, Any, Any]], cached: int,
                                                        reassign_at: int) -> None:
    """Any writes, deletes, reads and changelog records, with the partitions revoked and assigned
    again once (their keys read again from the databases): the store reads as a dict given the
    same, and its databases hold the same once the offsets are recorded."""
    with tempfile.TemporaryDirectory(prefix="sunset-store-") as tmp:
        store = open_store(Path(tmp))
        store.CACHED = cached
        model: dict[Any, Any] = {}
        for step, (operation, key, value) in enumerate(operations):
            if operation == "set":
                store[key] = model[key] = value
            elif operation == "delete":
                if key in model:
                    del store[key], model[key]
            elif operation == "get":
                assert store.get(key, "absent") == model.get(key, "absent")
                assert (key in store) == (key in model)
            else:
                changelog(store, [(key, value)], offset=step)
                if value is None:
                    model.pop(key, None)
                else:
                    model[key] = value
            if step == reassign_at:
                reassign(store)
            assert dict(store.items()) == model
            assert sorted(store.keys()) == sorted(model) and len(store) == len(model)
        record_offsets(store, len(operations))
        assert on_disk(store) == model
        close(store)
