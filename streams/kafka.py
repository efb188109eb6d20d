"""Plain aiokafka for the parts that are not the Faust worker: the receiver, `publish`, the tests."""

from __future__ import annotations

import contextlib
from typing import Any

from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import TopicAlreadyExistsError

from streams.settings import StreamSettings


def message_bytes(settings: StreamSettings) -> int:
    """The largest message sunset sends or reads: one event as big as the receiver accepts (GitLab's
    25 MiB body cap), or its dead letter (the payload plus the reason and coordinates)."""
    return settings.max_body_bytes + 64 * 1024


def producer_options(settings: StreamSettings) -> dict[str, Any]:
    """Producer settings; the dev profile's one-record batches apply here too."""
    options: dict[str, Any] = {"bootstrap_servers": settings.kafka_bootstrap(), "linger_ms": 5, "acks": "all",
                               "max_request_size": message_bytes(settings)}
    if settings.producer_max_batch_size is not None:
        options["max_batch_size"] = settings.producer_max_batch_size
    return options


def new_producer(settings: StreamSettings, **extra: Any) -> AIOKafkaProducer:
    return AIOKafkaProducer(**producer_options(settings), **extra)


async def ensure_topics(settings: StreamSettings) -> None:
    """Create the input, findings and dead-letter topics if they are missing (the worker does too)."""
    admin = AIOKafkaAdminClient(bootstrap_servers=settings.kafka_bootstrap())
    await admin.start()
    try:
        existing = set(await admin.list_topics())
        names = (settings.input_topic, settings.findings_topic, settings.dead_letter_topic)
        configs = {"max.message.bytes": str(message_bytes(settings))}
        missing = [NewTopic(n, settings.partitions, settings.replication_factor, topic_configs=configs)
                   for n in names if n not in existing]
        if missing:
            with contextlib.suppress(TopicAlreadyExistsError):  # created meanwhile by a worker: fine
                await admin.create_topics(missing)
    finally:
        await admin.close()
