"""The agents' bodies: one batch of Kafka events in, topic sends and table writes out.

Each stage partition holds the events it receives (`streams.holding`, in memory) until its
watermark passes them, then applies them in event-time order (`streams.eventtime`) with the plain
stage functions of `streams.engine` over a `BatchView` of its table, and sends what they return.
Progress reports (from ingest; to the project stage also from each actor partition) move the
watermark; they are kept in the table too, so a restarted worker resumes where it was. An event
that fails — bad JSON, a missing field, or an exception in a detector — goes to the dead-letter
topic with the reason and its source; it never stops the batch and is never dropped silently.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

import orjson

from streams.batching import MARKER_PREFIX, BatchView, decode_records, flush_views, is_marker, partition_for
from streams.continuity import Continuity, by_partition
from streams.engine import DUPLICATE, StageResult, actor_horizon, actor_stage, idle_actors, project_stage
from streams.eventtime import (
    FIRST,
    PROGRESS,
    SRC,
    actors_report,
    merge,
    new_progress,
    order_key,
    progress_key,
    watermarks,
)
from streams.findings import Finding
from streams.holding import Holding, Reread, applied, took
from streams.outputs import Outputs, Records
from streams.registry import REGISTRY
from streams.settings import StreamSettings

__all__ = ["ActorHandler", "Outputs", "ProjectHandler"]
Stage = Callable[[Any, dict[str, Any], Any], StageResult]
SWEEP_SLICE = 20_000  # keys looked at between two yields to the event loop


class Released(NamedTuple):
    """Where a held event is when it is applied (for its dead letter): the stage topic's partition."""

    topic: str
    partition: int
    offset: int | None
    key: bytes | None
    value: bytes


class _KeyedHandler:
    """A stage over one table: per partition, a BatchView; events held, then released by the
    watermark in order; one write per changed key."""

    stage_name = ""
    kind = ""  # "project" | "actor": which watermark (streams.eventtime.watermark)
    key_field = ""
    early: frozenset[str] = frozenset()  # types released by the input's watermark alone
    stage: Stage

    def __init__(self, settings: StreamSettings, table: Any, outputs: Outputs) -> None:
        self.settings, self.table, self.out = settings, table, outputs
        self.applied = self.duplicates = self.late = self.redelivered = 0
        self.holding: dict[int, Holding] = {}  # per partition: the events held for the watermark
        self.current: dict[int, Holding] = {}  # the same, for the partitions of the batch under way
        self.marks: dict[int, float] = {}  # per partition: the watermark of the last batch
        self.released: dict[int, tuple[float, float]] = {}  # per partition: both watermarks, after the last batch
        self.upto: dict[int, tuple[float, float]] = {}  # per partition: the watermarks its last stored marker says
        self.continuity = Continuity(settings, table)  # no stage message skipped

    def forget(self) -> None:
        """After a rebalance: the held events and the expected offsets come from the table (and
        the stage topic) again."""
        self.holding.clear()
        self.continuity.forget()

    def new_value(self) -> dict[str, Any]:
        """An empty value of this stage's key, from the detectors' list (streams.registry)."""
        return REGISTRY.new_project() if self.kind == "project" else REGISTRY.new_actor()

    async def handle(self, events: Sequence[Any]) -> None:
        metrics = self.out.metrics
        self.applied = self.duplicates = self.late = self.redelivered = 0
        views: dict[int, BatchView] = {}
        results: list[StageResult] = []
        refetched = self.continuity.refetched
        for partition, group in sorted(by_partition(events).items()):
            topic = group[0].message.topic
            if partition not in self.holding:
                group = await self._reload(topic, partition, group)
            self.current[partition] = self.holding[partition]  # kept to the flush, even if a rebalance forgets it
            group = await self.continuity.complete(topic, partition, group)
            view = views[partition] = BatchView(self.table)
            results += await self._partition(partition, group, view)
        findings: dict[str, Finding] = {}
        accesses: list[dict[str, Any]] = []
        for result in results:
            findings.update((f.id, f) for f in result.findings)
            accesses += result.accesses
        await self.out.publish(findings)
        await self.after(accesses, sorted(views))
        await self.before_flush(views)
        await self.out.delivered()  # findings and forwards on the broker before the state that follows them
        current, self.current = self.current, {}
        for partition, view in views.items():
            current[partition].pend(view, SRC)
        written = await flush_views(views, {p: self.continuity.next.get(p) for p in views},
                                    {p: current[p].marker(self.released.get(p)) for p in views})
        metrics.inc("sunset_stream_changelog_writes_total", written, table=self.table.name)
        metrics.inc("sunset_stream_messages_total", len(events), stage=self.stage_name)
        metrics.inc("sunset_stream_events_total", self.applied, stage=self.stage_name)
        metrics.inc("sunset_stream_duplicates_total", self.duplicates, stage=self.stage_name)
        metrics.inc("sunset_stream_late_events_total", self.late, stage=self.stage_name)
        metrics.inc("sunset_stream_redelivered_total", self.redelivered, stage=self.stage_name)
        metrics.inc("sunset_stream_batches_total", stage=self.stage_name)
        metrics.inc("sunset_stream_refetched_total", self.continuity.refetched - refetched, stage=self.stage_name)

    async def _partition(self, partition: int, group: list[Any], view: BatchView) -> list[StageResult]:
        """One stage partition's messages: hold their records, merge their progress reports, and
        release after each message that moved the watermark (a key holds at most a message's
        worth beyond the lateness)."""
        lateness, results = self.settings.allowed_lateness, []
        due = self.current[partition]
        progress = view.get(progress_key(partition)) or new_progress()
        marks = watermarks(progress, lateness, self.kind)
        for event in group:
            moved = False
            for record, line in decode_records(event.message.value or b""):
                if type(record) is dict and record.get("event_type") == PROGRESS:
                    merge(progress, record)
                    moved = True
                else:
                    await self._hold(event.message, view, due, record, line, marks[1],
                                     self.upto.get(partition) if type(event) is Reread else None)
            if moved:
                marks = watermarks(progress, lateness, self.kind)
                results += await self._release(partition, view, due, marks)
        if due.heap and due.heap[0][0] <= marks[0]:  # late events: applied now, so the flush holds only
            results += await self._release(partition, view, due, marks)  # what the watermarks have not passed
        view[progress_key(partition)] = progress
        self.marks[partition] = marks[1]
        self.released[partition] = marks
        if marks[1] > FIRST:
            self.out.metrics.set("sunset_stream_watermark_seconds", marks[1], stage=self.stage_name,
                                 partition=str(partition))
        return results

    async def _reload(self, topic: str, partition: int, group: list[Any]) -> list[Any]:
        """The partition's held events after a (re)start or rebalance: the messages from the last
        stored marker's `held` offset are read again, in front of the batch (which drops its copies),
        and their events held again — but those at or below its `upto` watermarks (applied and stored
        then, as is every record of the batch before `held`) or that their keys have applied since."""
        self.holding[partition] = Holding()
        marker = self.table.data.get(f"{MARKER_PREFIX}{partition}")
        stop = self.continuity.expected(partition)
        if not isinstance(marker, dict) or stop is None or not marker.get("upto"):
            return group  # nothing stored yet
        low, high = marker["upto"]  # JSON has no -inf: null is "nothing released yet"
        self.upto[partition] = (FIRST if low is None else low, FIRST if high is None else high)
        start = marker.get("held", stop)
        again = [Reread(m) for m in await self.continuity.fetch(topic, partition, start, stop, gap=False)
                 ] if start < stop else []
        return again + [Reread(e.message) if e.message.offset < start else e
                        for e in group if not start <= e.message.offset < stop]

    async def _hold(self, message: Any, view: BatchView, due: Holding, record: Any, line: bytes,
                    mark: float, upto: tuple[float, float] | None = None) -> None:
        """Keep one record until the watermark passes it. A record read again after a restart
        (`upto`: the watermarks of the last stored flush) that they had passed was applied then
        and is stored: skipped, whether its key is still there or was swept since."""
        try:
            if type(record) is not dict:
                raise ValueError("not JSON")
            key = record[self.key_field]
            if not isinstance(key, str):
                raise ValueError(f"no {self.key_field}")
            if upto is not None:
                at, kind, _ = order_key(record)
                if at <= (upto[0] if kind in self.early else upto[1]):
                    self.redelivered += 1
                    return
            src = record.get("src")
            if src is not None and (due.holds(src) or ((value := view.get(key)) is not None
                                                      and applied(value, src, SRC))):
                self.redelivered += 1  # held or applied already (the key's changelog record says which)
                return
            at = due.add(key, record, message.offset)
        except Exception as exc:  # noqa: BLE001 - any failure of one event goes to the dead letters
            await self.out.dead_letter(message, f"{self.stage_name} stage failed: {exc!r}", payload=line)
            return
        if at < mark:
            self.late += 1

    async def _release(self, partition: int, view: BatchView, due: Holding,
                       marks: tuple[float, float]) -> list[StageResult]:
        """Apply the held events the watermarks have passed, key by key, each key's in order; the
        key's value then records the source coordinates it applied."""
        results: list[StageResult] = []
        ahead, mark = marks
        for key in due.due_keys(ahead):
            ready = due.take(key, mark, ahead, self.early)
            if not ready:
                continue
            for entry in ready:
                result = await self._apply(partition, view, entry[3])
                if result is not None and (result.findings or result.accesses):
                    results.append(result)
            value = view.get(key)
            view[key] = took(self.new_value() if value is None else value, ready, SRC)
        return results

    async def _apply(self, partition: int, view: BatchView, record: dict[str, Any]) -> StageResult | None:
        try:
            result = self.stage(view, record, self.settings)
        except Exception as exc:  # noqa: BLE001 - any failure of one event goes to the dead letters
            line = orjson.dumps(record)
            where = Released(self.table.changelog_topic.get_topic_name(), partition, None, None, line)
            await self.out.dead_letter(where, f"{self.stage_name} stage failed: {exc!r}", payload=line)
            return None
        self.applied += 1
        self.duplicates += result is DUPLICATE
        return result

    async def after(self, accesses: Iterable[dict[str, Any]], partitions: list[int]) -> None:
        """What to do with access records the stage produced (the actor stage forwards them)."""

    async def before_flush(self, views: dict[int, BatchView]) -> None:
        """Last changes to the batch's views before they are written (the actor stage's sweep)."""


class ProjectHandler(_KeyedHandler):
    """Tallies, allowlists and gaps, keyed by project path."""

    stage_name = "projects"
    kind = "project"
    key_field = "pkey"
    early = REGISTRY.project_early
    stage = staticmethod(project_stage)


class ActorHandler(_KeyedHandler):
    """Mass downloads and job-token correlation, keyed by author id; accesses go to the project stage."""

    stage_name = "actors"
    kind = "actor"
    key_field = "akey"
    stage = staticmethod(actor_stage)

    def __init__(self, settings: StreamSettings, table: Any, by_project: Any, outputs: Outputs) -> None:
        super().__init__(settings, table, outputs)
        self.by_project = by_project
        self.sweep_at: dict[int, float] = {}  # per stage partition: the watermark of its next sweep
        self.reported: dict[int, float] = {}  # per stage partition: the watermark last told the project stage

    async def before_flush(self, views: dict[int, BatchView]) -> None:
        """Drop users idle past the horizon (`streams.engine.idle_actors`) from the partitions
        this batch touched, once per horizon of each partition's watermark: tombstones go to the
        changelog with the batch's writes, so a restarted worker does not bring them back. A
        large table is walked in slices, so heartbeats and the views keep being served."""
        due = [p for p in views if self.marks.get(p, FIRST) > FIRST
               and self.marks[p] >= self.sweep_at.get(p, float("-inf"))]
        if not due:
            return
        users: dict[int, list[tuple[str, Any]]] = {p: [] for p in due}
        for count, key in enumerate(list(self.table.data.keys()), start=1):  # every partition this worker has
            partition = partition_for(key, self.settings.partitions)
            if (partition in users and not is_marker(key) and key not in self.current[partition].held
                    and (value := views[partition].get(key)) is not None):
                users[partition].append((key, value))
            if count % SWEEP_SLICE == 0:
                await asyncio.sleep(0)
        expired = 0
        for partition in due:
            now = self.marks[partition]
            for key in idle_actors(users[partition], now, self.settings):
                del views[partition][key]
                expired += 1
            self.sweep_at[partition] = now + actor_horizon(self.settings)
        self.out.metrics.inc("sunset_stream_users_expired_total", expired)

    async def after(self, accesses: Iterable[dict[str, Any]], partitions: list[int]) -> None:
        """Forward the accesses; then tell every project partition how far each actor partition
        has released (after the accesses, on the same partitions: they arrive first)."""
        by_partition: Records = defaultdict(list)
        parts = self.settings.partitions
        for access in accesses:
            by_partition[partition_for(access["pkey"], parts)].append(access)
        await self.out.forward(self.by_project, by_partition)
        moved: dict[int, float] = {}
        for partition in partitions:
            mark = self.marks.get(partition, FIRST)
            if mark > FIRST and mark != self.reported.get(partition):
                moved[partition] = self.reported[partition] = mark
        if moved:  # one record per project partition for the batch's actor partitions
            await self.out.broadcast(self.by_project, range(parts), actors_report(parts, moved))
