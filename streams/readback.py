"""`sunset stream findings`: the findings topic read back as a table, or followed.

The topic is keyed by finding id and each record is that finding's latest state, so reading it
from the beginning and keeping the last record per key gives every finding in its final state —
on any worker count, without asking each worker's views.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import orjson
from aiokafka import AIOKafkaConsumer, TopicPartition

from streams.kafka import message_bytes, security_options
from streams.settings import StreamSettings

Write = Callable[[bytes], Any]


async def read_findings(settings: StreamSettings, write: Write, follow: bool = False) -> int:
    """Write the findings (one JSON line each, sorted by id) as they stand now; with `follow`,
    then every new state as it is published (one line each), until cancelled. The count written."""
    consumer = AIOKafkaConsumer(bootstrap_servers=settings.kafka_bootstrap(), group_id=None,
                                enable_auto_commit=False, max_partition_fetch_bytes=message_bytes(settings),
                                **security_options(settings))
    await consumer.start()
    try:
        topic = settings.findings_topic
        await consumer.topics()  # the metadata
        tps = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or ())]
        if not tps:
            return 0
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        ends = await consumer.end_offsets(tps)
        table: dict[str, bytes] = {}
        async def behind() -> bool:
            for tp in tps:
                if await consumer.position(tp) < ends[tp]:
                    return True
            return False

        while await behind():
            for records in (await consumer.getmany(timeout_ms=500)).values():
                table.update((r.key.decode(), r.value) for r in records if r.key is not None and r.value)
        for key in sorted(table):
            write(orjson.dumps(orjson.loads(table[key]), option=orjson.OPT_SORT_KEYS) + b"\n")
        count = len(table)
        while follow:
            for records in (await consumer.getmany(timeout_ms=1000)).values():
                for record in records:
                    if record.key is not None and record.value:
                        write(orjson.dumps(orjson.loads(record.value), option=orjson.OPT_SORT_KEYS) + b"\n")
                        count += 1
        return count
    finally:
        await consumer.stop()


def run_findings(settings: StreamSettings, write: Write, follow: bool) -> int:
    return asyncio.run(read_findings(settings, write, follow))
