"""The agents' bodies: one batch of Kafka events in, topic sends and table writes out.

Each handler validates, calls the plain stage functions of `streams.engine` over a `BatchView`
of its table, and sends what they return. An event that fails — bad JSON, a missing field, or
an exception in a detector — goes to the dead-letter topic with the reason and its source
topic/partition/offset; it never stops the batch and is never dropped silently.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import orjson

from streams.batching import (
    BatchView,
    decode_records,
    encode_lines,
    flush_views,
    is_marker,
    partition_for,
    send_raw,
)
from streams.engine import DUPLICATE, StageResult, actor_horizon, actor_stage, idle_actors, project_stage
from streams.events import Rejected, compact, normalize_safely, parse_payload
from streams.findings import Finding
from streams.metrics import Metrics
from streams.settings import StreamSettings

Stage = Callable[[Any, dict[str, Any], Any], StageResult]
SWEEP_SLICE = 20_000  # keys looked at between two yields to the event loop
Records = dict[int, list[dict[str, Any]]]


class Outputs:
    """Findings, dead letters and forwards: every send a stage makes, counted."""

    def __init__(self, findings: Any, dead_letters: Any, metrics: Metrics) -> None:
        self.findings_topic = findings
        self.dead_letter_topic = dead_letters
        self.metrics = metrics

    async def dead_letter(self, message: Any, reason: str, payload: bytes | None = None,
                          element: int | None = None) -> None:
        """The input as received (text if it decodes), why it failed, and where it came from.

        `message` is a Kafka record: aiokafka's or Faust's, both have topic/partition/offset/key/value.
        """
        raw = message.value if payload is None else payload
        record = {
            "reason": reason,
            "topic": message.topic,
            "partition": message.partition,
            "offset": message.offset,
            "element": element,
            "payload": raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw,
        }
        await send_raw(self.dead_letter_topic, orjson.dumps(record), message.key)
        self.metrics.inc("sunset_stream_dead_letters_total", reason=reason.split(":", 1)[0][:48])

    async def publish(self, findings: dict[str, Finding]) -> None:
        """The latest state of each finding raised in this batch, keyed by finding id, as its JSON."""
        for finding_id, finding in findings.items():
            await send_raw(self.findings_topic, orjson.dumps(finding.as_dict()), finding_id.encode())
            self.metrics.inc("sunset_stream_findings_total", kind=finding.kind)

    async def forward(self, topic: Any, by_partition: Records) -> None:
        """Records to a stage topic: one newline-delimited message per partition (and chunk)."""
        count = 0
        for partition, records in sorted(by_partition.items()):
            count += len(records)
            for message in encode_lines(records):
                await send_raw(topic, message, None, partition)
        self.metrics.inc("sunset_stream_forwarded_total", count, topic=topic.get_topic_name())


def _by_partition(events: Sequence[Any]) -> dict[int, list[Any]]:
    groups: dict[int, list[Any]] = defaultdict(list)
    for event in events:
        groups[event.message.partition].append(event)
    return groups


class Router:
    """Input records → the two stage topics. Stateless; the only place raw JSON is parsed."""

    def __init__(self, settings: StreamSettings, by_project: Any, by_actor: Any, outputs: Outputs) -> None:
        self.partitions = settings.partitions
        self.by_project, self.by_actor, self.out = by_project, by_actor, outputs

    async def handle(self, messages: Sequence[Any]) -> None:
        projects: Records = defaultdict(list)
        actors: Records = defaultdict(list)
        parts, valid = self.partitions, 0
        for message in messages:
            payload = parse_payload(message.value or b"")
            if isinstance(payload, Rejected):
                await self.out.dead_letter(message, payload.reason)
                continue
            for index, raw in enumerate(payload):
                record = normalize_safely(raw)
                if isinstance(record, Rejected):
                    await self.out.dead_letter(message, record.reason, element=index if len(payload) > 1 else None)
                    continue
                valid += 1
                p_key, a_key = record["pkey"], record["akey"]
                if p_key is None and a_key is None:
                    continue  # no detector reads this event type
                record = compact(record)
                if p_key is not None:
                    projects[partition_for(p_key, parts)].append(record)
                if a_key is not None:
                    actors[partition_for(a_key, parts)].append(record)
        metrics = self.out.metrics
        metrics.inc("sunset_stream_messages_total", len(messages), stage="route")
        metrics.inc("sunset_stream_events_total", valid, stage="route")
        metrics.inc("sunset_stream_batches_total", stage="route")
        await self.out.forward(self.by_project, projects)
        await self.out.forward(self.by_actor, actors)


class _KeyedHandler:
    """A stage over one table: per partition, a BatchView, then one write per changed key."""

    stage_name = ""
    stage: Stage

    def __init__(self, settings: StreamSettings, table: Any, outputs: Outputs) -> None:
        self.settings, self.table, self.out = settings, table, outputs
        self.applied = self.duplicates = 0

    async def handle(self, events: Sequence[Any]) -> None:
        metrics = self.out.metrics
        self.applied = self.duplicates = 0
        views: dict[int, BatchView] = {}
        findings: dict[str, Finding] = {}
        accesses: list[dict[str, Any]] = []
        for partition, group in sorted(_by_partition(events).items()):
            view = views[partition] = BatchView(self.table)
            for event in group:
                for record, line in decode_records(event.message.value or b""):
                    result = await self._apply(event, view, record, line)
                    if result is not None and (result.findings or result.accesses):
                        findings.update((f.id, f) for f in result.findings)
                        accesses += result.accesses
        await self.out.publish(findings)
        await self.after(accesses)
        await self.before_flush(views)
        written = await flush_views(views)
        metrics.inc("sunset_stream_changelog_writes_total", written, table=self.table.name)
        metrics.inc("sunset_stream_messages_total", len(events), stage=self.stage_name)
        metrics.inc("sunset_stream_events_total", self.applied, stage=self.stage_name)
        metrics.inc("sunset_stream_duplicates_total", self.duplicates, stage=self.stage_name)
        metrics.inc("sunset_stream_batches_total", stage=self.stage_name)

    async def _apply(self, event: Any, view: BatchView, record: Any, line: bytes) -> StageResult | None:
        try:
            if record is None:
                raise ValueError("not JSON")
            result = self.stage(view, record, self.settings)
        except Exception as exc:  # noqa: BLE001 - any failure of one event goes to the dead letters
            await self.out.dead_letter(event.message, f"{self.stage_name} stage failed: {exc!r}", payload=line)
            return None
        self.applied += 1
        self.duplicates += result is DUPLICATE
        return result

    async def after(self, accesses: Iterable[dict[str, Any]]) -> None:
        """What to do with access records the stage produced (the actor stage forwards them)."""

    async def before_flush(self, views: dict[int, BatchView]) -> None:
        """Last changes to the batch's views before they are written (the actor stage's sweep)."""


class ProjectHandler(_KeyedHandler):
    """Tallies, allowlists and gaps, keyed by project path."""

    stage_name = "projects"
    stage = staticmethod(project_stage)


class ActorHandler(_KeyedHandler):
    """Mass downloads and job-token correlation, keyed by author id; accesses go to the project stage."""

    stage_name = "actors"
    stage = staticmethod(actor_stage)

    def __init__(self, settings: StreamSettings, table: Any, by_project: Any, outputs: Outputs) -> None:
        super().__init__(settings, table, outputs)
        self.by_project = by_project
        # Per stage partition: the newest event time seen, and when its next sweep is due.
        self.newest: dict[int, float] = {}
        self.sweep_at: dict[int, float] = {}

    async def _apply(self, event: Any, view: BatchView, record: Any, line: bytes) -> StageResult | None:
        result = await super()._apply(event, view, record, line)
        if result is not None:
            partition, ts = event.message.partition, record["ts"]
            if ts > self.newest.get(partition, float("-inf")):
                self.newest[partition] = ts
        return result

    async def before_flush(self, views: dict[int, BatchView]) -> None:
        """Drop users idle past the horizon (`streams.engine.idle_actors`) from the partitions
        this batch touched, once per horizon of each partition's event time: tombstones go to the
        changelog with the batch's writes, so a restarted worker does not bring them back. A
        large table is walked in slices, so heartbeats and the views keep being served."""
        due = [p for p in views if p in self.newest and self.newest[p] >= self.sweep_at.get(p, float("-inf"))]
        if not due:
            return
        users: dict[int, list[tuple[str, Any]]] = {p: [] for p in due}
        for count, key in enumerate(list(self.table.data.keys()), start=1):  # every partition this worker has
            partition = partition_for(key, self.settings.partitions)
            if partition in users and not is_marker(key) and (value := views[partition].get(key)) is not None:
                users[partition].append((key, value))
            if count % SWEEP_SLICE == 0:
                await asyncio.sleep(0)
        expired = 0
        for partition in due:
            now = self.newest[partition]
            for key in idle_actors(users[partition], now, self.settings):
                del views[partition][key]
                expired += 1
            self.sweep_at[partition] = now + actor_horizon(self.settings)
        self.out.metrics.inc("sunset_stream_users_expired_total", expired)

    async def after(self, accesses: Iterable[dict[str, Any]]) -> None:
        by_partition: Records = defaultdict(list)
        for access in accesses:
            by_partition[partition_for(access["pkey"], self.settings.partitions)].append(access)
        await self.out.forward(self.by_project, by_partition)
