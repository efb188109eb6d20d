"""Stopping the worker, and what it logs while the broker is down (issue 14)."""

from __future__ import annotations

import asyncio
import json
import logging
import signal
from pathlib import Path
from typing import Any

import pytest
from aiokafka import TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from streamgen import generate, snapshot
from streamkit import (  # noqa: F401 - the `broker` and `run_worker` fixtures
    Worker,
    answers,
    broker_fixture,
    limits,
    produce,
    run_worker_fixture,
    wait_for,
    worker_results,
)
from test_stream_exact import SEED
from test_stream_worker import create_topic

from streams.dev import EmbeddedBroker
from streams.events import snapshot_records
from streams.replay import replay_lines
from streams.worker import app as logs


def test_a_repeating_problem_is_logged_once_per_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [100.0]
    monkeypatch.setattr(logs.time, "monotonic", lambda: now[0])
    limit = logs.OncePerInterval(interval=10.0)

    def record(msg: str, level: int = logging.ERROR) -> logging.LogRecord:
        return logging.LogRecord("aiokafka", level, __file__, 1, msg, None, None)

    passed = []
    for second in range(25):  # the same error ten times a second for 2.5 s, then 7.5 s, then once more
        now[0] = 100.0 + second * 0.1
        item = record("Unable connect to node with id %s")
        passed += [item.msg] if limit.filter(item) else []
    now[0] = 110.5
    item = record("Unable connect to node with id %s")
    passed += [item.msg] if limit.filter(item) else []
    assert passed == ["Unable connect to node with id %s",
                      "Unable connect to node with id %s (24 more like this in the last 10 s)"]
    assert limit.filter(record("another problem"))
    assert limit.filter(record("Unable connect to node with id %s", logging.INFO))  # below WARNING: all pass


@pytest.mark.integration
def test_sigterm_stops_the_worker_while_the_broker_is_down(tmp_path: Path) -> None:
    own = EmbeddedBroker(log_path=tmp_path / "tansu.log")
    own.start()
    worker = Worker(own, "stop", tmp_path / "worker").start()
    try:
        wait_for("the worker to be ready", lambda: answers(worker.url + "/ready"))
    finally:
        own.stop()
    wait_for("the worker to notice", lambda: "[ERROR]" in worker.log.read_text(errors="replace"), every=0.5)
    assert worker.process is not None
    worker.process.send_signal(signal.SIGTERM)
    # It stops (it used to take 45-70 s and log ~145 errors a second). The exit status is 0, or 1 when
    # Faust reports the broker's absence as a failure while stopping (seen once in a fresh-clone CI run);
    # either way a supervisor sees a stopped worker, which is what SIGTERM asks.
    assert worker.process.wait(timeout=60) in (0, 1)
    lines = worker.log.read_text(errors="replace").splitlines()
    repeated = [line for line in lines if "[ERROR]" in line and "Unable connect to node" in line]
    assert len(repeated) <= 3, repeated[:5]


def committed(bootstrap: str, group: str, topic: str, partitions: int) -> int:
    """The offsets the consumer group has committed on `topic`, summed (messages it is done with)."""
    async def read() -> int:
        admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
        await admin.start()
        try:
            offsets = await admin.list_consumer_group_offsets(
                group, partitions=[TopicPartition(topic, p) for p in range(partitions)])
        finally:
            await admin.close()
        return sum(max(0, o.offset) for o in offsets.values())

    return asyncio.run(read())


def test_sigterm_during_busy_ingest_exits_0_having_committed_what_it_routed(
        broker: EmbeddedBroker, run_worker: Any, tmp_path_factory: pytest.TempPathFactory) -> None:
    """SIGTERM while ingest is busy: exit 0 (it was 1 in 2 of 4 tries: ingest sent to the producer
    Faust had stopped, `NotReady`, a crash), the input offsets of every event routed committed; and
    three such stops in a row, then a worker to the end, give the replay's results."""
    seed = [json.dumps(record).encode() for record in snapshot_records(snapshot())]
    lines = generate(SEED + 2, busy=30_000)
    doc = replay_lines([line + b"\n" for line in lines], limits(), snapshot_records(snapshot()))
    app, messages = "stop-busy", seed + lines
    create_topic(broker.bootstrap, f"{app}-in", 4)
    produce(broker.bootstrap, f"{app}-in", messages, keyed=True)
    data = tmp_path_factory.mktemp("stop-busy")
    routed_before = 0
    for attempt in range(3):
        worker = Worker(broker, app, data / f"run-{attempt}", SUNSET_BATCH_SIZE="500").start()
        target = (len(messages) - routed_before) // 4  # this run's quarter of what is left
        wait_for("ingest busy", lambda w=worker, t=target: w.metric('sunset_stream_events_total{stage="route"}') >= t,
                 every=0.05)
        routed = routed_before + worker.metric('sunset_stream_events_total{stage="route"}')
        assert worker.process is not None
        worker.process.send_signal(signal.SIGTERM)
        assert worker.process.wait(timeout=60) == 0, worker.log.read_text()[-3000:]
        assert "We experienced a crash" not in worker.log.read_text(errors="replace")
        done = committed(broker.bootstrap, f"{app}-ingest", f"{app}-in", 4)
        assert done >= routed, (done, routed)
        routed_before = done
    last = run_worker(app)
    found = worker_results(last, broker, app, doc)
    expected = {f["id"]: f for f in doc["findings"]}
    assert sorted(set(found["findings"]) ^ set(expected)) == []
    assert found["tallies"] == doc["downloads"]
