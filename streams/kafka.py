"""Plain aiokafka for the parts that are not the Faust worker: the receiver, `publish`, the tests."""

from __future__ import annotations

import contextlib
import ssl
from typing import Any

import faust
from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import TopicAlreadyExistsError
from aiokafka.helpers import create_ssl_context

from streams.settings import StreamSettings


def message_bytes(settings: StreamSettings) -> int:
    """The largest message sunset sends or reads: one event as big as the receiver accepts (GitLab's
    25 MiB body cap), or its dead letter (the payload plus the reason and coordinates)."""
    return settings.max_body_bytes + 64 * 1024


def ssl_context(settings: StreamSettings) -> ssl.SSLContext | None:
    """The TLS context for SSL and SASL_SSL (verifying the brokers; mutual TLS with a cert and key)."""
    if "SSL" not in settings.kafka_security_protocol:
        return None
    context: ssl.SSLContext = create_ssl_context(
        cafile=None if settings.kafka_ssl_cafile is None else str(settings.kafka_ssl_cafile),
        certfile=None if settings.kafka_ssl_certfile is None else str(settings.kafka_ssl_certfile),
        keyfile=None if settings.kafka_ssl_keyfile is None else str(settings.kafka_ssl_keyfile))
    return context


def security_options(settings: StreamSettings) -> dict[str, Any]:
    """aiokafka's security settings (producer, consumer and admin client alike)."""
    protocol = settings.kafka_security_protocol
    if protocol == "PLAINTEXT":
        return {}
    options: dict[str, Any] = {"security_protocol": protocol}
    if "SSL" in protocol:
        options["ssl_context"] = ssl_context(settings)
    if protocol.startswith("SASL"):
        password = settings.kafka_sasl_password
        options.update(sasl_mechanism=settings.kafka_sasl_mechanism, sasl_plain_username=settings.kafka_sasl_username,
                       sasl_plain_password=None if password is None else password.get_secret_value())
    return options


def faust_credentials(settings: StreamSettings) -> Any:
    """The same settings as Faust's `broker_credentials` (None: plaintext)."""
    protocol = settings.kafka_security_protocol
    if protocol.startswith("SASL"):
        password = settings.kafka_sasl_password
        return faust.SASLCredentials(username=settings.kafka_sasl_username,
                                     password=None if password is None else password.get_secret_value(),
                                     ssl_context=ssl_context(settings), mechanism=settings.kafka_sasl_mechanism)
    if protocol == "SSL":
        return faust.SSLCredentials(ssl_context(settings))
    return None


def producer_options(settings: StreamSettings) -> dict[str, Any]:
    """Producer settings; the dev profile's one-record batches apply here too."""
    options: dict[str, Any] = {"bootstrap_servers": settings.kafka_bootstrap(), "linger_ms": 5, "acks": "all",
                               "max_request_size": message_bytes(settings), **security_options(settings)}
    if settings.producer_max_batch_size is not None:
        options["max_batch_size"] = settings.producer_max_batch_size
    return options


def new_producer(settings: StreamSettings, **extra: Any) -> AIOKafkaProducer:
    return AIOKafkaProducer(**producer_options(settings), **extra)


async def ensure_topics(settings: StreamSettings) -> None:
    """Create the input, findings and dead-letter topics if they are missing (the worker does too)."""
    admin = AIOKafkaAdminClient(bootstrap_servers=settings.kafka_bootstrap(), **security_options(settings))
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
