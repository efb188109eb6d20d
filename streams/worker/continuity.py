"""No stage message skipped: each stage partition's offsets checked against the table's own record.

The source coordinates (`streams.worker.agents`) make a record read *twice* harmless; they cannot
bring back one that is never handed over. Faust (0.15) can fail to hand an agent a message of
its stream and still commit past it (after a SIGKILL and restart: offsets 8–15 in one batch, 17–
in the next, never 16; tests/streams/test_stream_crash.py).

So the stage does not rely on it. Each flush ends with its marker record (`streams.worker.batching`),
which also says, per stage partition, the offset the stage expects next — written after the
batch's state changes are stored, so it never runs ahead of them. A batch whose first offset
(or any offset) jumps past the expected one makes the handler read the skipped messages itself,
straight from the stage topic, and handle them first, in order; the source coordinates skip
what was applied already. Redelivered offsets (below the expected one) go through as they are.
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from collections.abc import Sequence
from typing import Any, NamedTuple

from aiokafka import AIOKafkaConsumer, TopicPartition

from streams.kafka import message_bytes, security_options
from streams.settings import StreamSettings
from streams.worker.batching import MARKER_PREFIX

log = logging.getLogger("sunset.stream.continuity")
FETCH_WITHIN = 60.0  # seconds to read a gap before giving up on it (logged; never silent)


class Refetched(NamedTuple):
    """A stage message the handler read itself, shaped like a Faust event (`.message`)."""

    message: Any


def by_partition(events: Sequence[Any]) -> dict[int, list[Any]]:
    """A batch's events (anything with `.message`) grouped by their stage partition."""
    groups: dict[int, list[Any]] = defaultdict(list)
    for event in events:
        groups[event.message.partition].append(event)
    return groups


def marker_next(marker: Any) -> int | None:
    """The offset a flush marker says its partition expects next (None: a marker without it)."""
    return marker.get("next") if isinstance(marker, dict) else None


class Continuity:
    """Per stage partition, the offset expected next; gaps read from the topic."""

    def __init__(self, settings: StreamSettings, table: Any) -> None:
        self.settings, self.table = settings, table
        self.next: dict[int, int | None] = {}
        self.refetched = 0

    def forget(self) -> None:
        """After a rebalance: read the expected offsets from the recovered table again."""
        self.next.clear()

    def expected(self, partition: int) -> int | None:
        if partition not in self.next:
            marker = self.table.data.get(f"{MARKER_PREFIX}{partition}")
            # No marker at all: nothing of this partition was ever stored, so everything counts.
            self.next[partition] = 0 if marker is None else marker_next(marker)
        return self.next[partition]

    async def complete(self, topic: str, partition: int, group: Sequence[Any]) -> list[Any]:
        """The partition's events of a batch in offset order, with any skipped ones read in."""
        expected = self.expected(partition)
        out: list[Any] = []
        for event in sorted(group, key=lambda e: e.message.offset):
            offset = event.message.offset
            if expected is not None and offset > expected:
                missing = await self.fetch(topic, partition, expected, offset)
                self.refetched += len(missing)
                out += [Refetched(m) for m in missing]
            out.append(event)
            if expected is None or offset >= expected:
                expected = offset + 1
        self.next[partition] = expected
        return out

    async def fetch(self, topic: str, partition: int, start: int, stop: int, gap: bool = True) -> list[Any]:
        """Messages [start, stop) of one stage partition, read with a plain consumer (no group):
        a gap the consumer skipped (`gap`, logged), or the messages whose events were held at the
        last flush (streams.worker.agents)."""
        if gap:
            log.warning("%s[%d]: offsets %d..%d were not handed to the stage; reading them", topic, partition,
                        start, stop - 1)
        else:
            log.info("%s[%d]: reading offsets %d..%d again for their held events", topic, partition, start, stop - 1)
        tp = TopicPartition(topic, partition)
        consumer = AIOKafkaConsumer(bootstrap_servers=self.settings.kafka_bootstrap(), group_id=None,
                                    enable_auto_commit=False, auto_offset_reset="earliest",
                                    max_partition_fetch_bytes=max(4 * 1024 * 1024, message_bytes(self.settings)),
                                    **security_options(self.settings))
        await consumer.start()
        found: list[Any] = []
        try:
            consumer.assign([tp])
            consumer.seek(tp, start)
            deadline = asyncio.get_running_loop().time() + FETCH_WITHIN
            while (reached := await consumer.position(tp)) < stop and asyncio.get_running_loop().time() < deadline:
                batch = await consumer.getmany(tp, timeout_ms=500)
                found += [m for m in batch.get(tp, []) if start <= m.offset < stop]
        finally:
            await consumer.stop()
        if reached < stop:
            log.error("%s[%d]: could read only %d of the skipped messages %d..%d", topic, partition, len(found),
                      start, stop - 1)
        return found
