"""`SUNSET_STORE=rocksdb://` (streams/worker/store.py): the real worker keeps its tables in RocksDB on the
embedded broker, records how far each changelog partition is applied, and after a SIGKILL and a
restart has the replay's tallies and findings, then goes on exactly."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import rocksdict
from aiokafka import AIOKafkaConsumer, TopicPartition
from pydantic import ValidationError
from streamgen import generate, snapshot
from streamkit import (  # noqa: F401 - the `broker` fixture
    SAMPLE,
    SNAPSHOT,
    Worker,
    broker_fixture,
    get_json,
    limits,
    produce,
    read_topic,
    try_json,
    wait_for,
    worker_results,
)
from test_stream_exact import SEED
from test_stream_worker import create_topic, latest

from streams.dev import EmbeddedBroker
from streams.events import load_snapshot, snapshot_records
from streams.replay import replay_file, replay_lines
from streams.settings import StreamSettings

OFFSET_KEY = b"__faust\0offset__"  # where Faust's RocksDB store keeps a partition's applied changelog offset
PARTITIONS = 4


def persisted(data_dir: Path) -> dict[str, int | None]:
    """Each table partition's recorded changelog offset, read from its database (read-only: the
    worker may be running)."""
    out: dict[str, int | None] = {}
    for path in sorted((data_dir / "faust" / "v1" / "tables").glob("*.db")):
        db = rocksdict.Rdict(str(path), access_type=rocksdict.AccessType.read_only(),
                             options=rocksdict.Options(raw_mode=True))
        try:
            value = db.get(OFFSET_KEY)
        finally:
            db.close()
        out[path.name.removesuffix(".db")] = None if value is None else int(value)
    return out


def changelog_last(bootstrap: str, app_id: str) -> dict[str, int | None]:
    """Each table partition's last changelog offset on the broker (None: empty)."""
    async def run() -> dict[str, int | None]:
        consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=None)
        await consumer.start()
        try:
            tps = [TopicPartition(f"{app_id}-{table}-changelog", p)
                   for table in ("actors", "projects") for p in range(PARTITIONS)]
            ends = await consumer.end_offsets(tps)
        finally:
            await consumer.stop()
        return {f"{tp.topic.split('-')[1]}-{tp.partition}": (ends[tp] - 1 if ends[tp] else None) for tp in tps}

    return asyncio.run(run())


def test_rocksdb_store_restarts_from_its_own_state_after_sigkill(broker: EmbeddedBroker, tmp_path: Path) -> None:
    lines = [line for line in SAMPLE.read_bytes().splitlines() if line.strip()]
    first = tmp_path / "first.jsonl"
    first.write_bytes(b"\n".join(lines[:30]) + b"\n")
    settings = limits(mass_download_allowlist=["90"])
    expected_first = replay_file(first, settings, load_snapshot(SNAPSHOT))
    expected = replay_file(SAMPLE, settings, load_snapshot(SNAPSHOT))
    assert expected_first["downloads"] != expected["downloads"]  # the second half changes the tallies

    worker = Worker(broker, "rocks", tmp_path / "worker", partitions=PARTITIONS, SUNSET_STORE="rocksdb://",
                    SUNSET_MASS_DOWNLOAD_ALLOWLIST='["90"]')
    create_topic(broker.bootstrap, "rocks-in", 1)  # one input partition keeps the file's order
    worker.start()
    try:
        produce(broker.bootstrap, "rocks-in", [json.dumps(r).encode() for r in load_snapshot(SNAPSHOT)] + lines[:30])
        wait_for("the first half's tallies", lambda: try_json(worker.url + "/tallies") == expected_first["downloads"])
        final_first = {f["id"]: f for f in expected_first["findings"]}
        read_topic(broker.bootstrap, "rocks-findings", lambda r: latest(r) == final_first)
        # every table partition records its whole changelog as applied (streams.worker.store.PERSIST_EVERY)
        assert sorted(changelog_last(broker.bootstrap, "rocks")) == sorted(
            f"{t}-{p}" for t in ("actors", "projects") for p in range(PARTITIONS))

        def recorded() -> Any:  # the worker may still be writing (progress records): read both again
            return (mine := persisted(worker.data_dir)) == changelog_last(broker.bootstrap, "rocks") and mine

        wait_for("the applied changelog offsets in RocksDB (as on the broker)", recorded)

        worker.kill()
        worker.start()
        wait_for("/ready after the restart", lambda: (try_json(worker.url + "/ready") or {}).get("ready"))
        assert get_json(worker.url + "/tallies") == expected_first["downloads"]

        produce(broker.bootstrap, "rocks-in", lines[30:])
        wait_for("the whole sample's tallies", lambda: try_json(worker.url + "/tallies") == expected["downloads"])
        final = {f["id"]: f for f in expected["findings"]}
        findings = read_topic(broker.bootstrap, "rocks-findings", lambda r: latest(r) == final)
        assert latest(findings) == final
    finally:
        worker.stop()


# In ~3 % of runs under load this failed (busy/repo 99,839 and 99,855 of 100,000 downloads; job-token
# gaps counted once or twice too often): the store wrote RocksDB the value objects the next batch was
# changing in place, so a value could say records were applied that no changelog record had, and the
# restart skipped them. It now writes each value as stored (test_stream_store_keys).
# With 500 s of lateness, thousands of events are held at the kill: read again from the stage topics,
# judged against values RocksDB has (source coordinates, pending records) and the changelog's tail.
@pytest.mark.parametrize("lateness", [None, pytest.param(500.0, marks=pytest.mark.xfail(
    reason="open defect: in a CI run (c4291f7) the restart's tallies stayed short of the replay's for the "
           "whole 180 s wait (g1/app-3 5 of 17 downloads, g3/app-4 8 of 14, ...); it passed when run alone. "
           "Not diagnosed: events held at the kill lost, or held and never released", strict=False))],
                         ids=["in-order", "held"])
def test_rocksdb_store_killed_with_unwritten_changes_restarts_to_the_replays_results(
        broker: EmbeddedBroker, tmp_path: Path, lateness: float | None) -> None:
    """The store writes a changed key to RocksDB when its partition's offset is recorded, not at
    every flush: a SIGKILL in the middle of the stream, after offsets were recorded and with
    changelog records past them, leaves changes only the changelog has; the restart on the same
    data dir reads them from there and ends with the replay's results."""
    seed = [json.dumps(record).encode() for record in snapshot_records(snapshot())]
    lines = generate(SEED + 1, busy=100_000)  # long enough to see offsets recorded (every 5 s) mid-stream
    late = {} if lateness is None else {"allowed_lateness": lateness}
    doc = replay_lines([line + b"\n" for line in lines], limits(**late), snapshot_records(snapshot()))
    app = "rockskill" if lateness is None else "rockskillheld"  # no dash: `changelog_last` splits on them
    settings = {"SUNSET_BATCH_SIZE": "500"} | ({} if lateness is None else {"SUNSET_ALLOWED_LATENESS": str(lateness)})
    worker = Worker(broker, app, tmp_path / "worker", partitions=PARTITIONS, SUNSET_STORE="rocksdb://", **settings)
    create_topic(broker.bootstrap, f"{app}-in", PARTITIONS)
    produce(broker.bootstrap, f"{app}-in", seed + lines, keyed=True)
    worker.start()
    try:
        def unrecorded() -> bool:  # offsets recorded, and changelog records past them
            mine = persisted(worker.data_dir)
            return any(v is not None for v in mine.values()) and changelog_last(broker.bootstrap, app) != mine

        wait_for("/ready (the databases created)", lambda: (try_json(worker.url + "/ready") or {}).get("ready"),
                 every=0.05)
        wait_for("offsets recorded mid-stream", unrecorded, timeout=120, every=0.05)
        worker.kill()
        worker.start()
        found = worker_results(worker, broker, app, doc)
        assert found["tallies"] == doc["downloads"]
        assert found["findings"] == {f["id"]: f for f in doc["findings"]}
        if lateness is not None:
            assert "again for their held events" in worker.log.read_text()
    finally:
        worker.stop()


def test_the_store_setting_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    assert StreamSettings().store == "memory://"
    monkeypatch.setenv("SUNSET_STORE", "rocksdb://")
    assert StreamSettings().store == "rocksdb://"
    with pytest.raises(ValidationError, match="'memory://' or 'rocksdb://'"):
        StreamSettings(store="redis://")
