"""A backlog waits in Kafka, not in the worker: ingest reads its input partitions abreast in event time.

The stages hold every event until the slowest input partition has passed it, so a catch-up that
read one partition to its end before the next (aiokafka hands out a fetched partition's records
first) held nearly the whole backlog in memory. Ingest now reads no partition more than
`ahead_of_slowest` seconds of event time ahead of the slowest one that has records left.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from aiokafka import AIOKafkaProducer
from streamkit import at, broker_fixture  # noqa: F401 - the `broker` fixture
from test_stream_worker import create_topic

from streams.audit import parse_time
from streams.dev import EmbeddedBroker
from streams.metrics import Metrics
from streams.settings import load_settings
from streams.worker import ingest as ingest_module
from streams.worker.ingest import HELD_BUDGET, STAGES_AHEAD, Ingest, ahead_of_slowest

PARTITIONS, PER_PARTITION, SPACING = 4, 3000, 0.1  # each partition: 300 s of event time
LATENESS, BATCH = 20.0, 200


class Outputs:
    def __init__(self) -> None:
        self.metrics = Metrics()

    async def delivered(self) -> None:
        return None


class Recorder:
    """What ingest hands the router, and how far apart in event time the partitions were read: after
    each batch, the newest time read of the partition furthest ahead minus that of the slowest one
    with records left."""

    def __init__(self) -> None:
        self.newest: dict[int, float] = {}
        self.read: Counter[int] = Counter()
        self.spreads: list[float] = []
        self.out = Outputs()

    async def route(self, messages: list[Any]) -> None:
        for message in messages:
            ts = parse_time(json.loads(message.value)["created_at"])
            assert ts is not None
            self.newest[message.partition] = max(self.newest.get(message.partition, ts), ts)
            self.read[message.partition] += 1
        left = [p for p in range(PARTITIONS) if self.read[p] < PER_PARTITION]
        if left and all(p in self.newest for p in left):
            self.spreads.append(max(self.newest.values()) - min(self.newest[p] for p in left))

    async def send(self, routed: None, report: dict[str, Any] | None) -> None:
        if report is not None:
            await self.report(report)

    async def report(self, record: dict[str, Any]) -> None:
        return None


async def produce_backlog(bootstrap: str, topic: str) -> None:
    """`PER_PARTITION` downloads on each input partition, one partition after the other."""
    await produce_downloads(bootstrap, topic, [(p, f"g/p{p}", 0.0, PER_PARTITION, None) for p in range(PARTITIONS)],
                            linger_ms=20, max_batch_size=16384)  # aiokafka's default batch size


async def produce_downloads(bootstrap: str, topic: str, runs: list[tuple[int, str, float, int, int | None]],
                            linger_ms: int = 200, max_batch_size: int = 1024 * 1024) -> None:
    """Per (partition, project, first second, count, alone): `count` downloads of `project`
    `SPACING` apart from that second, the first `alone` of them (when given) flushed as a record
    batch of their own, the rest lingering into larger batches: the partition ends in a
    multi-record batch (the embedded broker then reports its end offset as that batch's first
    offset + 1)."""
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=linger_ms, max_batch_size=max_batch_size)
    await producer.start()
    try:
        for partition, project, first, count, alone in runs:
            for n in range(count):
                body = {"id": f"{partition}-{n}", "event_type": "repository_download_operation",
                        "created_at": at(first + n * SPACING), "entity_path": project, "author_id": 7}
                await producer.send(topic, json.dumps(body).encode(), partition=partition)
                if n + 1 == alone:
                    await producer.flush()
        await producer.flush()
    finally:
        await producer.stop()


async def ingest_until(ingest: Ingest, done: Callable[[], bool], lagging: float = 0.0,
                       step: Callable[[], None] | None = None) -> None:
    """Run `ingest` for `lagging` seconds, then (doing `step` each time) until `done`; then stop it."""
    task = asyncio.create_task(ingest.run())
    try:
        async with asyncio.timeout(120):
            await asyncio.sleep(lagging)
            while True:
                if task.done():
                    task.result()
                if done():
                    return
                if step is not None:
                    step()
                await asyncio.sleep(0.05)
    finally:
        await ingest.stop(10)
        await task


def backlog_settings(broker: EmbeddedBroker, topic: str) -> Any:
    return load_settings("dev", broker=broker.url, input_topic=topic, app_id=f"{topic}-app",
                         batch_size=BATCH, allowed_lateness=LATENESS)


async def catch_up(broker: EmbeddedBroker, topic: str) -> Recorder:
    recorder = Recorder()
    ingest = Ingest(backlog_settings(broker, topic), recorder)  # type: ignore[arg-type] - only what ingest calls
    await ingest_until(ingest, lambda: sum(recorder.read.values()) >= PARTITIONS * PER_PARTITION)
    return recorder


def test_a_backlog_is_read_abreast_in_event_time(broker: EmbeddedBroker) -> None:
    topic = "backlog-in"
    create_topic(broker.bootstrap, topic, PARTITIONS)
    asyncio.run(produce_backlog(broker.bootstrap, topic))
    recorder = asyncio.run(catch_up(broker, topic))
    assert recorder.read == {p: PER_PARTITION for p in range(PARTITIONS)}
    assert recorder.spreads  # measured all along the catch-up
    # a partition is read while it is at most `ahead_of_slowest` ahead; one batch moves it at most
    # BATCH events further
    bound = ahead_of_slowest(LATENESS) + BATCH * SPACING
    assert max(recorder.spreads) <= bound, max(recorder.spreads)


def test_an_agent_fetches_at_most_two_batches_of_stage_messages_ahead(tmp_path: Any) -> None:
    """Faust stops fetching a stage partition when its agent's buffer is full: the buffer is two
    batches (`noack_take`'s size), not Faust's default of 4,096 messages of up to 256 KiB each."""
    from streams.worker.app import STAGE_BATCH_MESSAGES, create_app

    app = create_app(load_settings("dev", broker="kafka://127.0.0.1:9", data_dir=tmp_path))
    assert (app.conf.stream_buffer_maxsize, STAGE_BATCH_MESSAGES) == (128, 64)


class Stages:
    """How far the stages have released and how many events they hold, as `Ingest` asks it: moved
    by the test, as a worker's stages move it by working through what ingest sent them."""

    def __init__(self, mark: float | None, holding: int) -> None:
        self.mark, self.holding = mark, holding

    def released(self) -> float | None:
        return self.mark

    def held(self) -> int:
        return self.holding


async def read_while_stages_lag(broker: EmbeddedBroker, topic: str, stages: Stages,
                                lagging: float) -> tuple[int, Recorder]:
    """Ingest over the backlog with stages stuck at `stages.mark` for `lagging` seconds, then caught
    up with everything read: how many records were read when they got unstuck."""
    recorder = Recorder()
    ingest = Ingest(backlog_settings(broker, topic), recorder, stages.released, stages.held)  # type: ignore[arg-type]
    stuck: list[int] = []

    def keep_up() -> None:
        if not stuck:
            stuck.append(sum(recorder.read.values()))
        stages.mark = min(recorder.newest.values()) - LATENESS  # the stages keep up from now on

    await ingest_until(ingest, lambda: bool(stuck) and sum(recorder.read.values()) >= PARTITIONS * PER_PARTITION,
                       lagging, keep_up)
    return stuck[0], recorder


# records the stages act on with their watermark at the first event's time: those routed while the
# slowest partition was read at most the lateness past it (the others are read at most
# `ahead_of_slowest` further), and a batch
ACTED_AT_START = PARTITIONS * round((LATENESS + ahead_of_slowest(LATENESS)) / SPACING) + BATCH


def test_ingest_waits_while_the_stages_lag_behind_it(broker: EmbeddedBroker) -> None:
    """A backlog read faster than the stages work through it would be held in memory by them (the
    project stage holds each event until every actor partition has released past it): while they
    hold more than `HELD_BUDGET` events, ingest routes at most `STAGES_AHEAD` batches beyond the
    last report they have acted on, and goes on when they catch up."""
    topic = "backlog-lag"
    create_topic(broker.bootstrap, topic, PARTITIONS)
    asyncio.run(produce_backlog(broker.bootstrap, topic))
    start = parse_time(at(0))
    assert start is not None
    stages = Stages(start, HELD_BUDGET + 1)
    stuck, recorder = asyncio.run(read_while_stages_lag(broker, topic, stages, lagging=3.0))
    assert STAGES_AHEAD * BATCH < stuck <= ACTED_AT_START + (STAGES_AHEAD + 1) * BATCH, stuck
    assert recorder.read == {p: PER_PARTITION for p in range(PARTITIONS)}  # then everything


def test_ingest_does_not_wait_for_stages_holding_little(broker: EmbeddedBroker) -> None:
    """Stages behind but within `HELD_BUDGET` events: ingest reads on (their batches stay large)."""
    topic = "backlog-little"
    create_topic(broker.bootstrap, topic, PARTITIONS)
    asyncio.run(produce_backlog(broker.bootstrap, topic))
    start = parse_time(at(0))
    assert start is not None
    stuck, _ = asyncio.run(read_while_stages_lag(broker, topic, Stages(start, HELD_BUDGET), lagging=3.0))
    assert stuck == PARTITIONS * PER_PARTITION


def test_ingest_still_reads_a_batch_now_and_then_while_the_stages_lag(
        broker: EmbeddedBroker, monkeypatch: pytest.MonkeyPatch) -> None:
    """Stages that do not catch up (stuck, or waiting for another worker's input) never stop ingest
    for good: it reads one batch every `POLL_EVERY` seconds, and the consumer stays in its group."""
    monkeypatch.setattr(ingest_module, "POLL_EVERY", 0.5)
    topic = "backlog-stuck"
    create_topic(broker.bootstrap, topic, PARTITIONS)
    asyncio.run(produce_backlog(broker.bootstrap, topic))
    start = parse_time(at(0))
    assert start is not None
    stuck, recorder = asyncio.run(read_while_stages_lag(broker, topic, Stages(start, HELD_BUDGET + 1), lagging=4.0))
    assert stuck > ACTED_AT_START + (STAGES_AHEAD + 1) * BATCH, stuck  # batches were read while they stayed behind
    assert sum(recorder.read.values()) == PARTITIONS * PER_PARTITION


class ReportRecorder(Recorder):
    """A `Recorder` that also keeps each progress report with how many records were read by then."""

    def __init__(self) -> None:
        super().__init__()
        self.reports: list[tuple[int, list[int]]] = []

    async def report(self, record: dict[str, Any]) -> None:
        self.reports.append((sum(self.read.values()), record["idle"]))


def test_waiting_for_the_stages_is_not_the_inputs_silence(broker: EmbeddedBroker,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A partition ingest does not read while it waits for the stages (here longer than the idle
    time) is not silent: reported idle, the watermark would pass the records it still has, and they
    would reach the stages late. It is reported idle only once read to its end.

    The stages act on the first batch (20 s of events, within the lateness) and lag from the second
    on, with 600 records still to read. The embedded broker reports the end offset of a partition
    ending in a multi-record batch as that batch's first offset + 1 (docs/streams.md), here 51: the
    position looks like the end long before it is, as ingest's idle check sees it after the wait."""
    monkeypatch.setattr(ingest_module, "STAGES_AHEAD", 0)
    topic, total = "backlog-quiet", 1000
    create_topic(broker.bootstrap, topic, 1)

    async def run() -> ReportRecorder:
        recorder, stages = ReportRecorder(), Stages(parse_time(at(0)), HELD_BUDGET + 1)
        settings = backlog_settings(broker, topic)
        ingest = Ingest(settings, recorder, stages.released, stages.held)  # type: ignore[arg-type]

        def catch_up() -> None:
            stages.mark = parse_time(at(total * SPACING))

        # the stages lag all along for longer than the idle time, then catch up
        await ingest_until(ingest, lambda: sum(recorder.read.values()) >= total
                           and any(idle for _, idle in recorder.reports), 2 * settings.idle_after + 1, catch_up)
        return recorder

    asyncio.run(produce_downloads(broker.bootstrap, topic, [(0, "g/p", 0.0, total, 50)]))
    recorder = asyncio.run(run())
    assert sum(recorder.read.values()) == total
    assert [read for read, idle in recorder.reports if idle] != []
    assert all(read == total for read, idle in recorder.reports if idle), recorder.reports  # idle only at its end


class ReadRecorder(Recorder):
    """A `Recorder` that keeps, with each progress report, how many records of each partition were
    read by then."""

    def __init__(self) -> None:
        super().__init__()
        self.reports: list[tuple[dict[int, int], list[int]]] = []

    async def report(self, record: dict[str, Any]) -> None:
        self.reports.append((dict(self.read), record["idle"]))


def test_a_partition_held_back_for_being_ahead_is_not_silent(broker: EmbeddedBroker) -> None:
    """A partition ingest does not read because it is too far ahead in event time (`aligned`) is
    not silent either: partition 0 starts 200 s after partition 1 and is held back while 1 catches
    up, far longer than the idle time (50 ms here). Its position is past the end offset the embedded
    broker reports (6: its last batch holds several records), so an idle check that counted the
    hold as silence reports it idle with 980 of its 1,000 records unread (checked)."""
    topic, early, late = "backlog-ahead", 3000, 1000
    create_topic(broker.bootstrap, topic, 2)

    async def run() -> ReadRecorder:
        recorder = ReadRecorder()
        settings = load_settings("dev", broker=broker.url, input_topic=topic, app_id=f"{topic}-app",
                                 batch_size=20, allowed_lateness=LATENESS, idle_after=0.05)
        ingest = Ingest(settings, recorder)  # type: ignore[arg-type] - only what ingest calls
        await ingest_until(ingest, lambda: recorder.read == {0: late, 1: early}
                           and any(idle == [0, 1] for _, idle in recorder.reports))
        return recorder

    asyncio.run(produce_downloads(broker.bootstrap, topic, [(0, "g/ahead", 200.0, late, 5),
                                                            (1, "g/behind", 0.0, early, None)]))
    recorder = asyncio.run(run())
    assert recorder.read == {0: late, 1: early}
    assert [read for read, idle in recorder.reports if 0 in idle] != []
    assert all(read.get(0) == late for read, idle in recorder.reports if 0 in idle), [
        (read, idle) for read, idle in recorder.reports if 0 in idle][:3]
