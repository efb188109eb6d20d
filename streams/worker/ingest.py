"""The worker's input: a plain aiokafka consumer, and the stateless step that parses, validates
and routes each event to the stages.

Faust hands an agent one message at a time through several queues and awaits, while aiokafka's
`getmany` reads a batch at once; GitLab streams one event per message, so this first step reads
the input topic with aiokafka directly, and what it forwards to the stateful Faust agents is one
newline-delimited message per stage partition per batch, so Faust's per-message cost stops
mattering there.

Offsets are committed only after the batch's forwards and dead letters are acknowledged by the
broker: at-least-once, like the agents. The consumer group is `<app id>-ingest`, so workers share
the input partitions the way the agents share theirs.
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict, deque
from collections.abc import Callable, Sequence
from typing import Any

import orjson
from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.errors import CommitFailedError, KafkaError

from streams.audit import SNAPSHOT
from streams.events import compact, read
from streams.eventtime import FIRST, as_of, input_report
from streams.kafka import message_bytes, security_options
from streams.settings import StreamSettings
from streams.worker.batching import partition_for
from streams.worker.outputs import Lines, Outputs

log = logging.getLogger("sunset.stream.ingest")
STAGES_AHEAD = 8  # batches of records routed that the stages may not have acted on yet (Ingest.stages_lag)
HELD_BUDGET = 20_000  # events this worker's stages may hold before ingest waits for them to catch up
STAGES_WAIT = 0.05  # seconds between two looks at the stages while they lag behind the input
POLL_EVERY = 10.0  # seconds: while the stages lag, a batch is still read at least this often


def ahead_of_slowest(lateness: float) -> float:
    """How far (seconds of event time) an input partition may be read ahead of the slowest one
    with records left: the allowed lateness, and at least 30 s (fewer, larger batches)."""
    return max(lateness, 30.0)


def consumer_options(settings: StreamSettings) -> dict[str, Any]:
    """aiokafka consumer settings; the dev profile's group timeouts apply here too."""
    options: dict[str, Any] = {
        "bootstrap_servers": settings.kafka_bootstrap(),
        "group_id": f"{settings.app_id}-ingest",
        "enable_auto_commit": False,
        "auto_offset_reset": "earliest",
        "max_partition_fetch_bytes": max(4 * 1024 * 1024, message_bytes(settings)),
        **security_options(settings),
    }
    if settings.broker_session_timeout is not None:
        options["session_timeout_ms"] = int(settings.broker_session_timeout * 1000)
    if settings.broker_heartbeat_interval is not None:
        options["heartbeat_interval_ms"] = int(settings.broker_heartbeat_interval * 1000)
    if settings.broker_rebalance_timeout is not None:
        options["rebalance_timeout_ms"] = int(settings.broker_rebalance_timeout * 1000)
    return options


class Ingest:
    """Input topic → `Router` → stage topics, in batches, committing after the broker has them."""

    def __init__(self, settings: StreamSettings, router: Router,
                 released: Callable[[], float | None] | None = None, held: Callable[[], int] | None = None) -> None:
        self.settings, self.router = settings, router
        self.released, self.held = released, held  # how far this worker's stages are, and how much they hold
        self.consumer: AIOKafkaConsumer | None = None
        # The input's progress (streams.eventtime) is the router's `newest`; here, per input
        # partition, when a record last came; what the stages were last told; when idleness was checked.
        self.last_data: dict[int, float] = {}
        self.told: tuple[int, dict[int, float], set[int]] | None = None
        self.checked = float("-inf")
        self.stopping = asyncio.Event()  # set by `stop`: end after the batch under way is committed
        self.polled = float("-inf")  # when a batch was last asked of the consumer
        self.held_back: set[int] = set()  # input partitions the last batch did not read: too far ahead (`aligned`)
        self.routed = self.acted = 0  # records routed; of them, those the stages have acted on
        # reports the stages have not acted on: (slowest active partition's newest time, records routed by then)
        self.reports: deque[tuple[float, int]] = deque()
        self.stopped = asyncio.Event()

    async def run(self) -> None:
        """Until `stop` (or cancelled). Broker errors are retried; anything else propagates (and
        crashes the worker)."""
        self.consumer = AIOKafkaConsumer(self.settings.input_topic, **consumer_options(self.settings))
        try:
            await self.consumer.start()
            while not self.stopping.is_set():
                if self.stages_lag() and asyncio.get_running_loop().time() - self.polled < POLL_EVERY:
                    await self.wait_for_stages()
                    continue
                self.polled = asyncio.get_running_loop().time()
                batches = await self.next_batch()
                if batches:
                    await self.process(batches)
                else:
                    await self.report()
                    await self.router.out.delivered()
        finally:
            try:
                await self.consumer.stop()
            finally:
                self.stopped.set()

    async def stop(self, within: float) -> None:
        """End ingest before the worker's producer stops: the batch under way is forwarded and its
        input offsets committed, then nothing more is read (at most `within` seconds)."""
        self.stopping.set()
        try:
            async with asyncio.timeout(within):
                await self.stopped.wait()
        except TimeoutError:
            log.warning("ingest did not stop within %g s; its last batch will be read again", within)

    async def wait_for_stages(self) -> None:
        """Let the stages catch up. Ingest's own wait is not the input's silence: the partitions
        are not read meanwhile, so none counts as quiet for it (`report` would call a partition
        whose position looks like its end idle, and the watermark would pass its records still
        to be read: they would reach the stages late)."""
        await asyncio.sleep(STAGES_WAIT)
        now = asyncio.get_running_loop().time()
        for partition in self.last_data:
            self.last_data[partition] = now

    def stages_lag(self) -> bool:
        """Whether this worker's stages hold more than `HELD_BUDGET` events (`held`) and lag more
        than `STAGES_AHEAD` batches behind what ingest has told them: that many of the records
        routed since the last report they have acted on. A report is acted on once the lowest
        watermark this worker's stage partitions have released (`released`) is where it allows
        (the slowest active input partition's newest time it says, minus the lateness). Ingest
        then reads nothing more until they catch up: what it read would only be held in memory
        (the project stage holds its events until every actor partition has released past them,
        and in a catch-up the slowest one decides), while it can wait in Kafka. Below the budget,
        or a few batches ahead, the stages' own batches stay large (fewer changelog writes).

        No deadlock: the stages act on what was already reported without more input (events held
        for the lateness alone never make ingest wait), and while they lag a batch is still read
        every `POLL_EVERY` seconds (stages waiting for another worker's input, or stuck, never stop
        ingest for good; a consumer that does not poll for `max_poll_interval_ms` leaves its group)."""
        if self.released is None or not self.reports:
            return False
        low = self.released()
        if low is None:  # no stage partition on this worker: nothing to wait for
            self.reports.clear()
            self.acted = self.routed
            return False
        if low == FIRST:
            return False  # nothing released yet: the watermark waits for every input partition
        lateness, reports = self.settings.allowed_lateness, self.reports
        while reports and reports[0][0] - lateness <= low:
            self.acted = reports.popleft()[1]
        return (self.routed - self.acted > STAGES_AHEAD * self.settings.batch_size
                and (self.held is None or self.held() > HELD_BUDGET))

    async def next_batch(self) -> dict[TopicPartition, list[Any]]:
        """Up to `batch_size` records, waiting at most `batch_within` seconds once the first arrived;
        from the input partitions that are not too far ahead in event time (`aligned`)."""
        assert self.consumer is not None
        size, within = self.settings.batch_size, self.settings.batch_within
        read = await self.aligned()
        batches: dict[TopicPartition, list[Any]] = await self.consumer.getmany(*read, timeout_ms=int(within * 1000),
                                                                             max_records=size)
        count = sum(map(len, batches.values()))
        deadline = asyncio.get_running_loop().time() + within
        while batches and count < size:
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                break
            more = await self.consumer.getmany(*read, timeout_ms=int(left * 1000), max_records=size - count)
            if not more:
                break
            for tp, records in more.items():
                batches.setdefault(tp, []).extend(records)
                count += len(records)
        return batches

    async def aligned(self) -> list[TopicPartition]:
        """The input partitions to read next: all of them (an empty list), or — when some with records
        left to read are behind — all but those more than `ahead_of_slowest` seconds of event time
        ahead of the slowest of those. The stages hold every event until the slowest input partition
        has passed it (streams.eventtime), so a catch-up that read one partition far ahead of the
        others would pile its events up in the worker's memory; this keeps them in Kafka instead.
        The slowest partition with records left is always read, so reading never stops. A partition
        held back is not silent: its position may look like its end (the embedded broker's early end
        offset), and reported idle the watermark would pass the records it still has."""
        assert self.consumer is not None
        self.held_back = set()
        topic, newest = self.settings.input_topic, self.router.newest
        assigned = [tp for tp in self.consumer.assignment() if tp.topic == topic]
        if len(assigned) < 2:
            return []
        behind: list[float] = []
        for tp in assigned:
            high = self.consumer.highwater(tp)
            if high is None:
                continue
            try:
                position = await self.consumer.position(tp)
            except KafkaError:  # IllegalStateError: a rebalance under way: read what is assigned
                return []
            if position < high:
                behind.append(newest.get(tp.partition, FIRST))
        if not behind:
            return []
        limit = min(behind) + ahead_of_slowest(self.settings.allowed_lateness)
        read = [tp for tp in assigned if newest.get(tp.partition, FIRST) <= limit]
        if len(read) == len(assigned):
            return []
        now = asyncio.get_running_loop().time()
        self.held_back = {tp.partition for tp in assigned if newest.get(tp.partition, FIRST) > limit}
        for partition in self.held_back:  # not silent (as in `wait_for_stages`): quiet only from now on
            self.last_data[partition] = now
        return read

    async def process(self, batches: dict[TopicPartition, list[Any]]) -> None:
        messages = [message for records in batches.values() for message in records]
        routed = await self.router.route(messages)
        self.routed += len(messages)
        now = asyncio.get_running_loop().time()
        for tp in batches:
            self.last_data[tp.partition] = now
        await self.router.send(routed, await self.progress())  # the progress after the batch's records
        await self.router.out.delivered()  # forwards and dead letters are on the broker before we commit
        offsets = {tp: records[-1].offset + 1 for tp, records in batches.items() if records}
        assert self.consumer is not None
        metrics = self.router.out.metrics
        for tp, position in offsets.items():
            high = self.consumer.highwater(tp)
            if high is not None:  # consumer lag, as of the last fetch
                metrics.set("sunset_stream_input_lag_messages", max(0, high - position), partition=str(tp.partition))
        try:
            await self.consumer.commit(offsets)
        except (CommitFailedError, KafkaError) as exc:
            # A rebalance took the partitions: their new owner re-reads from the last commit,
            # the stages drop what they have already seen (event ids). At-least-once.
            log.warning("commit failed (%s); the batch will be read again", exc)


    async def report(self) -> None:
        """Tell every stage partition the progress of this worker's input partitions, when it changed."""
        record = await self.progress()
        if record is not None:
            await self.router.report(record)

    async def progress(self) -> dict[str, Any] | None:
        """The progress report of this worker's input partitions for every stage partition (None
        when it has not changed since the last one). A partition caught up (position at its end
        offset) and silent for `idle_after` seconds is reported idle: it no longer holds the
        watermark back."""
        assert self.consumer is not None
        topic = self.settings.input_topic
        total = len(self.consumer.partitions_for_topic(topic) or ())
        if not total:
            return None
        assigned = sorted(tp.partition for tp in self.consumer.assignment() if tp.topic == topic)
        now = asyncio.get_running_loop().time()
        for partition in assigned:
            self.last_data.setdefault(partition, now)
        idle = set() if self.told is None else {p for p in self.told[2] if p in assigned}
        if now - self.checked >= min(1.0, self.settings.idle_after / 4):  # at most once a second
            self.checked = now
            idle = await self._idle([p for p in assigned if now - self.last_data[p] >= self.settings.idle_after
                                     and p not in self.held_back])
        newest = self.router.newest
        at = {p: newest[p] for p in assigned if p in newest}
        if self.told == (total, at, idle):
            return None
        self.told = (total, at, idle)
        active = [ts for partition, ts in at.items() if partition not in idle]
        self.reports.append((min(active) if active else FIRST, self.routed))
        return input_report(total, at, idle)

    async def _idle(self, quiet: list[int]) -> set[int]:
        """Which of the quiet partitions are caught up (asked of the broker now, not the last fetch)."""
        assert self.consumer is not None
        if not quiet:
            return set()
        tps = [TopicPartition(self.settings.input_topic, p) for p in quiet]
        try:
            ends = await self.consumer.end_offsets(tps)
            return {tp.partition for tp in tps if await self.consumer.position(tp) >= ends[tp]}
        except KafkaError as exc:
            log.warning("could not read the input's end offsets (%s)", exc)
            return set()


async def run_ingest(app: Any, ingest: Ingest, topics: list[Any]) -> None:
    """The Faust task body: declare the stage topics, then ingest until stopped; a failure crashes
    the worker (one while it stops is logged: what was not committed is read again next time)."""
    try:
        for topic in topics:
            await topic.maybe_declare()
        await ingest.run()
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        if ingest.stopping.is_set():
            log.warning("ingest stopped on %r; its last batch will be read again", exc)
            return
        log.exception("ingest failed")
        await app.crash(exc)
        raise


class Router:
    """Input records → the two stage topics; the only place raw JSON is parsed (`streams.events.read`).

    Its one piece of state is each input partition's progress, the newest event time read
    (`newest`): an event more than the allowed lateness behind it is late and is applied as of
    that bound (`streams.eventtime.as_of`), decided here, once, in the partition's order. It is
    kept when a rebalance takes a partition and gives it back: what is then read again from the
    last commit was forwarded already (the stages skip it by its source coordinates), and what
    follows is judged as if nothing had happened. A worker that starts, or that gets a partition
    another worker read, learns its progress from the events it reads."""

    def __init__(self, settings: StreamSettings, by_project: Any, by_actor: Any, outputs: Outputs) -> None:
        self.partitions, self.lateness = settings.partitions, settings.allowed_lateness
        self.by_project, self.by_actor, self.out = by_project, by_actor, outputs
        self.newest: dict[int, float] = {}

    async def handle(self, messages: Sequence[Any]) -> None:
        """Route a batch, in each input partition's order, and send it."""
        await self.send(await self.route(messages))

    async def route(self, messages: Sequence[Any]) -> tuple[Lines, Lines]:
        """A batch's records per stage partition of each stage topic (projects, actors), in each
        input partition's order; what cannot be used goes to the dead letters."""
        projects: Lines = defaultdict(list)
        actors: Lines = defaultdict(list)
        parts, lateness, newest = self.partitions, self.lateness, self.newest
        dumps = orjson.dumps
        valid = late = 0
        for message in messages:
            got = read(message.value or b"")
            items = (got,) if type(got) is dict else got
            partition = message.partition
            for index, event in enumerate(items):
                if type(event) is not dict:
                    await self.out.dead_letter(message, event.reason, element=event.element)  # type: ignore[union-attr]
                    continue
                valid += 1
                p_key, a_key = event["pkey"], event["akey"]
                if p_key is None and a_key is None:
                    continue  # no detector reads this event type
                record = compact(event)
                record["src"] = [partition, message.offset, index]  # what the stages skip when read again
                if record["event_type"] != SNAPSHOT:  # a snapshot's taken_at is not stream time
                    ts, top = record["ts"], newest.get(partition, FIRST)
                    if ts > top:
                        newest[partition] = ts
                    elif ts < top - lateness:
                        as_of(record, top - lateness)
                        late += 1
                line = dumps(record)  # once, for both stages
                if p_key is not None:
                    projects[partition_for(p_key, parts)].append(line)
                if a_key is not None:
                    actors[partition_for(a_key, parts)].append(line)
        metrics = self.out.metrics
        metrics.inc("sunset_stream_messages_total", len(messages), stage="route")
        metrics.inc("sunset_stream_events_total", valid, stage="route")
        metrics.inc("sunset_stream_late_events_total", late, stage="route")
        metrics.inc("sunset_stream_batches_total", stage="route")
        return projects, actors

    async def send(self, routed: tuple[Lines, Lines], report: dict[str, Any] | None = None) -> None:
        """Routed records to the stage topics; `report`, when given, after them on every stage
        partition (in the message of its last records, where it has some)."""
        everywhere = range(self.partitions)
        for topic, lines in zip((self.by_project, self.by_actor), routed, strict=True):
            await self.out.forward(topic, lines, report, everywhere)

    async def report(self, record: dict[str, Any]) -> None:
        """A progress report to every partition of both stage topics (no records with it)."""
        await self.send(({}, {}), record)
