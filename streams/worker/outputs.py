"""Every send a stage makes — findings, dead letters, forwards to a stage topic — counted, and
awaited (`delivered`) before what follows them is committed: a send the broker refused raises
there, instead of being passed over by a producer flush (which waits, but does not check)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

import orjson

from streams.detectors.base import Finding
from streams.metrics import Metrics
from streams.worker.batching import chunk_lines, send_raw

Lines = dict[int, list[bytes]]  # per stage partition: records, each as its JSON line


class Outputs:
    """Findings, dead letters and forwards: every send a stage makes, counted."""

    def __init__(self, findings: Any, dead_letters: Any, metrics: Metrics) -> None:
        self.findings_topic = findings
        self.dead_letter_topic = dead_letters
        self.metrics = metrics
        self.pending: list[Any] = []  # delivery futures not checked yet

    async def send(self, topic: Any, value: bytes | None, key: bytes | None = None,
                   partition: int | None = None) -> None:
        self.pending.append(await send_raw(topic, value, key, partition))

    async def delivered(self) -> None:
        """Wait until the broker has every send so far; raise if it refused one.

        Ingest and both stages share these outputs, each in a task of its own, and each waits here
        before it commits or stores what follows its sends. A send one of them waits for stays
        pending for the others until the broker has it: taken off the list by the first to wait,
        another side's later call would return before its own send is on the broker (its state could
        then be stored without the findings or forwards it follows). A waiter that is cancelled does
        not cancel the sends (`asyncio.wait`, not `gather`)."""
        waiting = [future for future in self.pending if future is not None]
        try:
            if waiting:
                await asyncio.wait(waiting)
        finally:
            self.pending = [future for future in self.pending if future is not None and not future.done()]
        for future in waiting:
            future.result()  # a refused send raises here

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
        await self.send(self.dead_letter_topic, orjson.dumps(record), message.key)
        self.metrics.inc("sunset_stream_dead_letters_total", reason=reason.split(":", 1)[0][:48])

    async def publish(self, findings: dict[str, Finding]) -> None:
        """The latest state of each finding raised in this batch, keyed by finding id, as its JSON."""
        for finding_id, finding in findings.items():
            await self.send(self.findings_topic, orjson.dumps(finding.as_dict()), finding_id.encode())
            self.metrics.inc("sunset_stream_findings_total", kind=finding.kind)

    async def forward(self, topic: Any, by_partition: Lines, report: dict[str, Any] | None = None,
                      partitions: Iterable[int] = ()) -> None:
        """Records (JSON lines) to a stage topic: one newline-delimited message per partition (and
        chunk); and `report` (a progress record), when given, to each of `partitions` after its
        records, in the message of its last ones (one message fewer per partition than a broadcast)."""
        count = 0
        tail = None if report is None else orjson.dumps(report)
        for partition in sorted(set(by_partition) | (set(partitions) if tail else set())):
            lines = by_partition.get(partition, [])
            count += len(lines)
            for message in chunk_lines(lines if tail is None else [*lines, tail]):
                await self.send(topic, message, None, partition)
        self.metrics.inc("sunset_stream_forwarded_total", count, topic=topic.get_topic_name())

    async def broadcast(self, topic: Any, partitions: Iterable[int], record: dict[str, Any]) -> None:
        """One small record (a progress report) to each of `partitions` of a stage topic."""
        line = orjson.dumps(record)
        for partition in partitions:
            await self.send(topic, line, None, partition)
