"""The agents' bodies: one batch of stage messages in, topic sends and table writes out.

Each stage partition holds the events it receives (in memory, `streams.eventtime`) until its
watermark passes them, then applies them in event-time order with the plain stage functions of
`streams.stages` over a `BatchView` of its table, and sends what they return. Progress reports
(from ingest; to the project stage also from each actor partition) move the watermark; they are
kept in the table too, so a restarted worker resumes where it was. An event that fails — bad
JSON, a missing field, or an exception in a detector — goes to the dead-letter topic with the
reason and its source; it never stops the batch and is never dropped silently.

Exact after a crash without broker transactions:

* Each flush marker (`streams.worker.batching`) also says `held`: the lowest stage offset of a
  message with an event still held. A restarted worker (or a partition that moved) reads the stage
  topic from there up to the offset expected next (`streams.worker.continuity`) and holds those
  events again. It also says the partition's `progress`, from which the restarted stage's
  watermarks resume: the progress key written by the same flush may be stored without the marker,
  ahead of the events held again, and those must be applied at their own time, not as late ones.
* Each key's value records, per input partition, the highest source coordinates it has *applied*
  (`src`), and the coordinates of its events still held below them (`pend`: a key's events are
  applied in event-time order, not in arrival order), in the same changelog record as the state
  they produced. So a record read again — by that re-read, or redelivered — is skipped when its
  key has applied it, and held again when it has not; a crash between any two changelog records
  of a flush loses nothing and applies nothing twice.
* The actor stage tells the project stage how far it has released only once the flush that
  stored that state is on the broker: a project partition never releases past an event that a
  restarted actor partition applies again, so the accesses it forwards again arrive in time and
  are recognised as repeats by their ids.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from math import inf
from typing import Any, NamedTuple

import orjson

from streams.detectors.base import Finding
from streams.detectors.registry import REGISTRY
from streams.eventtime import (
    FIRST,
    PROGRESS,
    SRC,
    Entry,
    Holding,
    actors_report,
    as_of,
    merge,
    new_progress,
    order_key,
    progress_key,
    watermarks,
)
from streams.settings import StreamSettings
from streams.stages import DUPLICATE, StageResult, actor_horizon, actor_stage, idle_actors, project_stage
from streams.worker.batching import (
    MARKER_PREFIX,
    BatchView,
    decode_records,
    flush_views,
    is_marker,
    partition_for,
    payload_of,
)
from streams.worker.continuity import Continuity, by_partition
from streams.worker.outputs import Lines, Outputs

__all__ = ["ActorHandler", "Outputs", "ProjectHandler", "held_events", "lowest_released"]
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
        self.holding: dict[int, Held] = {}  # per partition: the events held for the watermark
        self.current: dict[int, Held] = {}  # the same, for the partitions of the batch under way
        self.marks: dict[int, float] = {}  # per partition: the watermark of the last batch
        self.released: dict[int, tuple[float, float]] = {}  # per partition: both watermarks, after the last batch
        self.upto: dict[int, tuple[float, float]] = {}  # per partition: the watermarks its last stored marker says
        self.resumed: dict[int, dict[str, Any]] = {}  # per partition: the progress its last stored marker says
        self.again: dict[int, tuple[int, int]] = {}  # per partition: the stage offsets [held, next) read again
        self.tops: dict[int, dict[int, tuple[int, ...]]] = {}  # per partition: see `_tops`
        self.continuity = Continuity(settings, table)  # no stage message skipped

    def forget(self) -> None:
        """After a rebalance: the held events and the expected offsets come from the table (and
        the stage topic) again."""
        self.holding.clear()
        self.continuity.forget()

    def lowest_released(self) -> float | None:
        """The lowest watermark the stage partitions this worker holds have released (the project
        stage's: the one that also waits for the actor stage); None when it holds none yet."""
        marks = [self.released[p][1] for p in self.holding if p in self.released]
        return min(marks) if marks else None

    def new_value(self) -> dict[str, Any]:
        """An empty value of this stage's key, from the detectors' list (streams.detectors.registry)."""
        return REGISTRY.new_project() if self.kind == "project" else REGISTRY.new_actor()

    async def handle(self, events: Sequence[Any]) -> None:
        metrics = self.out.metrics
        self.applied = self.duplicates = self.late = self.redelivered = 0
        views: dict[int, BatchView] = {}
        results: list[StageResult] = []
        refetched = self.continuity.refetched
        for partition, group in sorted(by_partition(events).items()):
            topic = group[0].message.topic
            group = await self._arrived(topic, partition, group)
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
                                    {p: {**current[p].marker(self.released.get(p)),
                                         "progress": orjson.loads(orjson.dumps(views[p].get(progress_key(p))))}
                                     for p in views})
        await self.after_flush(sorted(views))
        metrics.inc("sunset_stream_changelog_writes_total", written, table=self.table.name)
        metrics.inc("sunset_stream_messages_total", len(events), stage=self.stage_name)
        metrics.inc("sunset_stream_events_total", self.applied, stage=self.stage_name)
        metrics.inc("sunset_stream_duplicates_total", self.duplicates, stage=self.stage_name)
        metrics.inc("sunset_stream_late_events_total", self.late, stage=self.stage_name)
        metrics.inc("sunset_stream_redelivered_total", self.redelivered, stage=self.stage_name)
        metrics.inc("sunset_stream_batches_total", stage=self.stage_name)
        metrics.inc("sunset_stream_refetched_total", self.continuity.refetched - refetched, stage=self.stage_name)
        metrics.set("sunset_stream_held_events", sum(map(len, self.holding.values())), stage=self.stage_name)

    async def _partition(self, partition: int, group: list[Any], view: BatchView) -> list[StageResult]:
        """One stage partition's messages: hold their records, merge their progress reports, and
        release after each message that moved the watermark (a key holds at most a message's
        worth beyond the lateness)."""
        lateness, results = self.settings.allowed_lateness, []
        due, tops = self.current[partition], self.tops[partition]
        progress = self.resumed.pop(partition, None) or view.get(progress_key(partition)) or new_progress()
        marks = watermarks(progress, lateness, self.kind)
        hold = self._hold
        for event in group:
            moved = False
            message = event.message
            value, offset = message.value or b"", message.offset
            upto = self.upto.get(partition) if type(event) is Reread else None
            for index, record in enumerate(decode_records(value)):
                if type(record) is dict and record.get("event_type") == PROGRESS:
                    merge(progress, record)
                    moved = True
                else:
                    failed = hold(offset, view, due, record, marks, tops, upto)
                    if failed is not None:
                        await self.out.dead_letter(message, failed, payload=payload_of(value, index, record))
            if moved:
                marks = watermarks(progress, lateness, self.kind)
                results += await self._release(partition, view, due, marks)
        if due.passed(*marks):  # late events: applied now, so the flush holds only what the watermarks
            results += await self._release(partition, view, due, marks)  # have not passed
        view[progress_key(partition)] = progress
        self.marks[partition] = marks[1]
        self.released[partition] = marks
        if marks[1] > FIRST:
            self.out.metrics.set("sunset_stream_watermark_seconds", marks[1], stage=self.stage_name,
                                 partition=str(partition))
        return results

    async def _arrived(self, topic: str, partition: int, group: list[Any]) -> list[Any]:
        """A batch's messages of one partition as the stage takes them: after a (re)start or
        rebalance with the held events read again (`_reload`), and without what the last stored
        marker covers (`_handed_again`)."""
        if partition not in self.holding:
            return await self._reload(topic, partition, group)
        return self._handed_again(partition, group) if partition in self.again else group

    async def _reload(self, topic: str, partition: int, group: list[Any]) -> list[Any]:
        """The partition's held events after a (re)start or rebalance: the messages from the last
        stored marker's `held` offset are read again, in front of the batch (which drops its copies),
        and their events held again — but those before its `upto` watermarks (applied and stored
        then, as is every record of the batch before `held`) or that their keys have applied since.

        The watermarks resume from the marker's `progress`, not from the progress key: a flush killed
        after writing that key and before its marker leaves it ahead of the events held again, which
        would then be applied as late, as of its watermark — not at their own time, as the first run
        and the replay apply them (tests/streams/test_stream_restart.py)."""
        self.holding[partition] = Held()
        self.tops[partition] = self._tops(partition)
        self.again.pop(partition, None)
        marker = self.table.data.get(f"{MARKER_PREFIX}{partition}")
        stored = marker.get("progress") if isinstance(marker, dict) else None
        if marker is None or isinstance(stored, dict):  # else a marker of the version before: the progress key
            self.resumed[partition] = new_progress() if stored is None else orjson.loads(orjson.dumps(stored))
        stop = self.continuity.expected(partition)
        if not isinstance(marker, dict) or stop is None or not marker.get("upto"):
            return group  # nothing stored yet
        low, high = marker["upto"]  # JSON has no -inf: null is "nothing released yet"
        self.upto[partition] = (FIRST if low is None else low, FIRST if high is None else high)
        start = marker.get("held", stop)
        self.again[partition] = (start, stop)
        again = [Reread(m) for m in await self.continuity.fetch(topic, partition, start, stop, gap=False)
                 ] if start < stop else []
        return again + self._handed_again(partition, group)

    def _tops(self, partition: int) -> dict[int, tuple[int, ...]]:
        """Per input partition, the highest source coordinates (offset, element) of a record this
        stage partition has seen: at a (re)start or rebalance, the highest its stored values have
        applied; then raised by each record it receives. A record above them is neither held nor
        applied, so `_hold` looks up only the records at or below them — the ones read again."""
        tops: dict[int, tuple[int, ...]] = {}
        data, partitions = self.table.data, self.settings.partitions
        for key in list(data.keys()):
            if is_marker(key) or not isinstance(key, str) or partition_for(key, partitions) != partition:
                continue
            value = data.get(key)
            coords = value.get(SRC) if isinstance(value, dict) else None
            for name, last in (coords.items() if isinstance(coords, dict) else ()):
                top, here = tops.get(int(name)), tuple(last)
                if top is None or here > top:
                    tops[int(name)] = here
        return tops

    def _handed_again(self, partition: int, group: list[Any]) -> list[Any]:
        """A batch's messages below the offset the last stored marker expected next, handed again
        by a consumer that restarted from an older committed offset — in the first batch after the
        (re)start or in any later one: those from its `held` offset on were read again for their
        held events (dropped), those before it are `Reread` (what the marker's watermarks had passed
        is skipped). An access has no source coordinates, so only that skips one applied long before:
        held again, it would be applied as of the watermark and, more than `dedup_ttl` behind it, no
        longer recognised by its id."""
        start, stop = self.again[partition]
        return [Reread(e.message) if e.message.offset < start else e
                for e in group if not start <= e.message.offset < stop]

    def _hold(self, offset: int, view: BatchView, due: Held, record: Any, marks: tuple[float, float],
              tops: dict[int, tuple[int, ...]], upto: tuple[float, float] | None = None) -> str | None:
        """Keep one record (of the stage message at `offset`) until its watermark passes it; one
        already behind it is late, and is applied as of that watermark (`streams.eventtime.as_of`).
        A record read again after a restart (`upto`: the watermarks of the last stored flush) that
        they had passed was applied then and is stored: skipped, whether its key is still there or
        was swept since. A record above the partition's `tops` (`_tops`) cannot be held or applied
        yet: only one at or below them is looked up. Why the record failed, for its dead letter;
        None if it did not."""
        try:
            if type(record) is not dict:
                raise ValueError("not JSON")
            key = record[self.key_field]
            if not isinstance(key, str):
                raise ValueError(f"no {self.key_field}")
            order = order_key(record)
            at, kind = order[0], order[1]
            early = kind in self.early
            if upto is not None and at < (upto[0] if early else upto[1]):
                self.redelivered += 1
                return None
            coords = record.get("src")
            src = None if coords is None else tuple(coords)
            if src is not None:
                here, top = src[1:], tops.get(src[0])
                if top is None or here > top:
                    tops[src[0]] = here
                elif due.holds(key, src) or ((value := view.get(key)) is not None and applied(value, src, SRC)):
                    self.redelivered += 1  # held or applied already (the key's changelog record says which)
                    return None
            mark = marks[0] if early else marks[1]
            late = at < mark and at != FIRST
            if late:
                order = (as_of(record, mark), kind, order[2])
                self.late += 1
            due.hold(key, record, offset, early, order, late, src)
        except Exception as exc:  # noqa: BLE001 - any failure of one event goes to the dead letters
            return f"{self.stage_name} stage failed: {exc!r}"
        return None

    async def _release(self, partition: int, view: BatchView, due: Held,
                       marks: tuple[float, float]) -> list[StageResult]:
        """Apply the held records the watermarks have passed, in order; each key's value then
        records the source coordinates it applied."""
        results: list[StageResult] = []
        ready = due.release(*marks, self.key_field)
        if not ready:
            return results
        by_key: dict[str, list[Entry]] = {}
        key_field, stage, settings = self.key_field, self.stage, self.settings
        failed: list[tuple[dict[str, Any], Exception]] = []
        done = duplicates = 0
        for entry in ready:
            record = entry[4]
            try:
                result = stage(view, record, settings)
            except Exception as exc:  # noqa: BLE001 - any failure of one event goes to the dead letters
                failed.append((record, exc))
            else:
                done += 1
                if result.findings or result.accesses:
                    results.append(result)
                elif result is DUPLICATE:
                    duplicates += 1
            key = record[key_field]
            entries = by_key.get(key)
            if entries is None:
                by_key[key] = [entry]
            else:
                entries.append(entry)
        self.applied += done
        self.duplicates += duplicates
        for key, entries in by_key.items():
            value = view.get(key)
            view[key] = took(self.new_value() if value is None else value, entries, SRC)
        for record, error in failed:
            line = orjson.dumps(record)
            where = Released(self.table.changelog_topic.get_topic_name(), partition, None, None, line)
            await self.out.dead_letter(where, f"{self.stage_name} stage failed: {error!r}", payload=line)
        return results

    async def after(self, accesses: Iterable[dict[str, Any]], partitions: list[int]) -> None:
        """What to do with access records the stage produced (the actor stage forwards them)."""

    async def after_flush(self, partitions: list[int]) -> None:
        """What to send once the batch's state is stored (the actor stage's progress reports)."""

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
        self.doomed: dict[int, tuple[float, list[str]]] = {}  # per stage partition: users found idle, and when

    def forget(self) -> None:
        super().forget()
        self.doomed.clear()  # the partitions' new owners sweep them again

    async def before_flush(self, views: dict[int, BatchView]) -> None:
        """Drop users idle past the horizon (`streams.engine.idle_actors`) from the partitions
        this batch touched, once per horizon of each partition's watermark: tombstones go to the
        changelog, so a restarted worker does not bring them back. A large table is walked in
        slices, so heartbeats and the views keep being served.

        A user found idle is deleted by the partition's next flush, not this one, if still idle
        then: its tombstone must follow a stored marker whose watermarks (`upto`) are past every
        event of the user. A worker killed after a flush's writes and before its marker restarts
        from the previous marker and holds again the events after that marker's watermarks, except
        those their keys have applied; a user deleted by that same flush would have no value to
        say so, and would be applied again from nothing (its accesses forwarded again, possibly
        after the project's record of their ids expired: counted twice)."""
        expired = self._delete_doomed(views)
        due = [p for p in views if self.marks.get(p, FIRST) > FIRST
               and self.marks[p] >= self.sweep_at.get(p, float("-inf"))]
        if not due:
            self.out.metrics.inc("sunset_stream_users_expired_total", expired)
            return
        users: dict[int, list[tuple[str, Any]]] = {p: [] for p in due}
        for count, key in enumerate(list(self.table.data.keys()), start=1):  # every partition this worker has
            partition = partition_for(key, self.settings.partitions)
            if (partition in users and not is_marker(key) and not self.current[partition].holding(key)
                    and (value := views[partition].get(key)) is not None):
                users[partition].append((key, value))
            if count % SWEEP_SLICE == 0:
                await asyncio.sleep(0)
        for partition in due:
            now = self.marks[partition]
            self.doomed[partition] = (now, idle_actors(users[partition], now, self.settings))
            self.sweep_at[partition] = now + actor_horizon(self.settings)
        self.out.metrics.inc("sunset_stream_users_expired_total", expired)

    def _delete_doomed(self, views: dict[int, BatchView]) -> int:
        """Delete the users the partitions' last sweep found idle that still are (nothing applied
        or held for them since); how many."""
        expired = 0
        for partition in [p for p in views if p in self.doomed]:
            now, keys = self.doomed.pop(partition)
            view, held = views[partition], self.current[partition]
            present = [(key, value) for key in keys if not held.holding(key) and (value := view.get(key)) is not None]
            for key in idle_actors(present, now, self.settings):
                del view[key]
                expired += 1
        return expired

    async def after(self, accesses: Iterable[dict[str, Any]], partitions: list[int]) -> None:
        """Forward the accesses to their projects' partitions."""
        by_partition: Lines = defaultdict(list)
        parts = self.settings.partitions
        for access in accesses:
            by_partition[partition_for(access["pkey"], parts)].append(orjson.dumps(access))
        await self.out.forward(self.by_project, by_partition)

    async def after_flush(self, partitions: list[int]) -> None:
        """Tell every project partition how far each actor partition has released — once the
        flush that stored its state and marker is on the broker, and after the accesses, on the
        same partitions (they arrive first).

        Told before, a project partition could release past events whose application a kill
        then lost: the restarted actor partition applies them again from its marker and forwards
        their accesses again, behind the project's watermark — late, applied as of it, and, more
        than `dedup_ttl` behind it, no longer recognised as repeats (a job-token gap counted
        twice; tests/streams/test_stream_restart.py)."""
        parts = self.settings.partitions
        moved: dict[int, float] = {}
        for partition in partitions:
            mark = self.marks.get(partition, FIRST)
            if mark > FIRST and mark != self.reported.get(partition):
                moved[partition] = self.reported[partition] = mark
        if moved:  # one record per project partition for the batch's actor partitions
            await self.out.broadcast(self.by_project, range(parts), actors_report(parts, moved))


def lowest_released(*handlers: _KeyedHandler) -> float | None:
    """The lowest watermark any stage partition of this worker has released (None: none yet): how
    far behind the input its stages are (`streams.worker.ingest.Ingest.stages_lag`)."""
    marks = [mark for handler in handlers if (mark := handler.lowest_released()) is not None]
    return min(marks) if marks else None


def held_events(*handlers: _KeyedHandler) -> int:
    """How many events the stage partitions of this worker hold for their watermarks."""
    return sum(len(held) for handler in handlers for held in handler.holding.values())


PEND = "pend"  # the key of a value: source coordinates (below `src`) of its events held, not applied


class Reread(NamedTuple):
    """A stage message read again after a restart for the events it held (`_KeyedHandler._reload`)."""

    message: Any


def took(value: dict[str, Any], ready: list[Entry], coords_key: str) -> dict[str, Any]:
    """A key's value after its `ready` events were applied: its source coordinates cover them,
    and none of them is pending any more (the flush records the rest: `Held.pend`)."""
    if PEND in value:
        done = {entry[5][1] for entry in ready}  # the tags' coordinates (streams.worker.agents.Held.hold)
        value[PEND] = [s for s in value[PEND] if tuple(s) not in done]
    if len(ready) == 1:  # the usual case: one event of the key per release
        tops: Iterable[tuple[int, ...]] = (ready[0][5][1],)
    else:
        top: dict[int, tuple[int, ...]] = {}  # per input partition, the highest of `ready`
        for entry in ready:
            src = entry[5][1]
            partition = src[0]
            if partition not in top or src > top[partition]:
                top[partition] = src
        tops = top.values()
    coords = None
    for src in tops:
        if src[0] == -1:  # accesses: no coordinates
            continue
        if coords is None:
            coords = value.get(coords_key)
            if coords is None:
                coords = value[coords_key] = {}
        name, here = str(src[0]), list(src[1:])
        last = coords.get(name)
        if last is None or here > last:
            coords[name] = here
    return value


def applied(value: dict[str, Any], src: tuple[int, ...], coords_key: str) -> bool:
    """Whether a key's value has applied the record at these source coordinates (input partition,
    offset, element): at or below the highest it applied from that partition, and not pending."""
    coords = value.get(coords_key)
    last = None if coords is None else coords.get(str(src[0]))
    if last is None or list(src[1:]) > last:
        return False
    pending = value.get(PEND)
    return pending is None or list(src) not in pending


class Held:
    """One stage partition's held events (`streams.eventtime.Holding`), with what a flush must say
    about them: which keys hold which source coordinates, and which stage offsets they came from."""

    __slots__ = ("early", "late", "offsets", "ordered", "srcs", "unplaced")

    def __init__(self) -> None:
        self.early = Holding()  # types released by the input's watermark alone (Registry.project_early)
        self.ordered = Holding()
        self.late = Holding()  # records that reached the stage behind its watermark, held at it
        self.srcs: dict[str, set[tuple[int, ...]]] = {}  # key -> source coordinates of its held records
        self.offsets: dict[int, int] = {}  # stage offset -> how many held records came in that message
        self.unplaced = 0  # records without source coordinates (accesses) held so far: their stand-in
    def __len__(self) -> int:
        return len(self.early) + len(self.ordered) + len(self.late)

    def passed(self, ahead: float, mark: float) -> bool:
        """Whether the watermarks may have passed a held record (a late one, held after a release)."""
        return self.early.earliest() <= ahead or self.ordered.earliest() <= mark or len(self.late.numbers) > 0

    def holds(self, key: str, src: tuple[int, ...]) -> bool:
        """Whether the record at these source coordinates is held."""
        held = self.srcs.get(key)
        return held is not None and src in held

    def holding(self, key: str) -> bool:
        """Whether `key` has a record held."""
        return key in self.srcs

    def hold(self, key: str, record: dict[str, Any], offset: int, early: bool, order: tuple[float, str, str],
             late: bool = False, src: tuple[int, ...] | None = None) -> None:
        """Hold one record of `key` (from the stage message at `offset`, with source coordinates
        `src`) at its place `order` (`order_key`, its time perhaps the watermark it is applied as
        of); a `late` one (at its watermark) goes with the next release.
        A record without coordinates (an access) is known by its arrival, under an input
        partition no record has (-1). Each entry's tag: (stage offset, coordinates)."""
        if src is None:
            self.unplaced += 1
            src = (-1, self.unplaced)
        (self.late if late else self.early if early else self.ordered).hold(order, record, (offset, src))
        held = self.srcs.get(key)
        if held is None:
            held = self.srcs[key] = set()
        held.add(src)
        self.offsets[offset] = self.offsets.get(offset, 0) + 1

    def release(self, ahead: float, mark: float, key_field: str) -> list[Entry]:
        """The records the watermarks have passed (`early` types by `ahead`), in order; they are no
        longer held."""
        ready = self.early.due(ahead)
        ready += self.ordered.due(mark)
        ready += self.late.due(inf)  # at the watermark they arrived behind: after what is before it
        offsets, srcs = self.offsets, self.srcs
        for entry in ready:
            offset, src = entry[5]
            key = entry[4][key_field]
            held = srcs[key]
            held.discard(src)
            if not held:
                del srcs[key]
            left = offsets[offset] - 1
            if left:
                offsets[offset] = left
            else:
                del offsets[offset]
        return ready

    def held_from(self) -> int | None:
        """The lowest stage offset of a message with a record still held (None: nothing held)."""
        return min(self.offsets) if self.offsets else None

    def marker(self, released: tuple[float, float] | None) -> dict[str, Any]:
        """What the partition's flush marker adds: the first stage offset with a record still held,
        and how far both watermarks had released (what a restart need not hold again)."""
        held = self.held_from()
        upto = {"upto": list(released or (FIRST, FIRST))}
        return upto if held is None else {"held": held, **upto}

    def pend(self, view: Any, coords_key: str) -> None:
        """Before a flush: each changed value records which of its key's held records are below its
        source coordinates (its records are applied in event-time order, not in arrival order)."""
        srcs = self.srcs
        for key in view.changed():
            value = view.get(key)
            if type(value) is not dict:
                continue
            if key in srcs:
                coords = value.get(coords_key)
                pending = self.pending(key, coords) if coords and not is_marker(key) else None
                if pending:
                    value[PEND] = pending
                    continue
            if PEND in value and not is_marker(key):
                del value[PEND]

    def pending(self, key: str, coords: dict[str, list[int]]) -> list[list[int]]:
        """Source coordinates of the key's held records at or below what its value has applied."""
        out = []
        for src in sorted(self.srcs.get(key, ())):
            last = coords.get(str(src[0]))  # None for a record without coordinates (`_src`)
            if last is not None and list(src[1:]) <= last:
                out.append(list(src))
        return out

