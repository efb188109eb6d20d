"""The worker's first, stateless step: input records parsed, validated and routed to the stages."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from streams.batching import partition_for
from streams.events import Rejected, compact, normalize_safely, parse_payload
from streams.eventtime import FIRST
from streams.eventtypes import SNAPSHOT
from streams.outputs import Outputs, Records
from streams.settings import StreamSettings


class Router:
    """Input records → the two stage topics. Stateless; the only place raw JSON is parsed."""

    def __init__(self, settings: StreamSettings, by_project: Any, by_actor: Any, outputs: Outputs) -> None:
        self.partitions = settings.partitions
        self.by_project, self.by_actor, self.out = by_project, by_actor, outputs

    async def handle(self, messages: Sequence[Any]) -> dict[int, float]:
        """Route a batch; the newest event time read per input partition (its progress)."""
        projects: Records = defaultdict(list)
        actors: Records = defaultdict(list)
        progress: dict[int, float] = {}
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
                record["src"] = [message.partition, message.offset, index]  # what the stages skip when read again
                if record["event_type"] != SNAPSHOT and record["ts"] > progress.get(message.partition, FIRST):
                    progress[message.partition] = record["ts"]  # a snapshot's taken_at is not stream time
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
        return progress

    async def report(self, record: dict[str, Any]) -> None:
        """A progress report to every partition of both stage topics."""
        for topic in (self.by_project, self.by_actor):
            await self.out.broadcast(topic, range(self.partitions), record)
