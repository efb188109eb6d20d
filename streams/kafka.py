"""Plain aiokafka for everything that is not the Faust worker: the clients' options (security,
sizes), `sunset stream publish`, `sunset stream findings`, and the topics they need.

`publish` sends lines of a JSONL file (and snapshot records) to the input topic as they are, one
message each — the worker, not this command, decides what is a dead letter — so publishing a file
and replaying it see the same input. Each is keyed like the receiver keys GitLab's events
(`entity_path`; a snapshot record by its `project`), so the input partitions hold what they would
hold in production.

`findings` reads the findings topic back as a table: the topic is keyed by finding id and each
record is that finding's latest state, so reading it from the beginning and keeping the last
record per key gives every finding in its final state — on any worker count, without asking each
worker's views.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import ssl
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import faust
import orjson
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import TopicAlreadyExistsError
from aiokafka.helpers import create_ssl_context

from streams.events import load_snapshot
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


async def ensure_topics(settings: StreamSettings, names: Sequence[str] | None = None) -> None:
    """Create topics if they are missing (the worker does too): `names`, by default the input,
    findings and dead-letter topics, with the stream's partitions and message size."""
    admin = AIOKafkaAdminClient(bootstrap_servers=settings.kafka_bootstrap(), **security_options(settings))
    await admin.start()
    try:
        existing = set(await admin.list_topics())
        if names is None:
            names = (settings.input_topic, settings.findings_topic, settings.dead_letter_topic)
        configs = {"max.message.bytes": str(message_bytes(settings))}
        missing = [NewTopic(n, settings.partitions, settings.replication_factor, topic_configs=configs)
                   for n in names if n not in existing]
        if missing:
            with contextlib.suppress(TopicAlreadyExistsError):  # created meanwhile by a worker: fine
                await admin.create_topics(missing)
    finally:
        await admin.close()


async def publish_messages(settings: StreamSettings, messages: list[bytes]) -> int:
    """Send the messages to the input topic and wait until the broker has them all."""
    await ensure_topics(settings)
    producer = new_producer(settings)
    await producer.start()
    try:
        futures = [await producer.send(settings.input_topic, message, key=message_key(message))
                   for message in messages]
        await asyncio.gather(*futures)
    finally:
        await producer.stop()
    return len(messages)


def message_key(message: bytes) -> bytes | None:
    """The receiver's key for an event (`entity_path`), or a snapshot record's `project`; None for
    anything else (an array, a line that is not JSON)."""
    try:
        doc = orjson.loads(message)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(doc, dict):
        return None
    path = doc.get("entity_path") if "entity_path" in doc else doc.get("project")
    return path.encode() if isinstance(path, str) else None


def publish_files(settings: StreamSettings, events: Path | None, snapshot: Path | None) -> int:
    """Snapshot records first, then the file's non-blank lines."""
    messages = [json.dumps(r).encode() for r in load_snapshot(snapshot)] if snapshot else []
    if events is not None:
        with events.open("rb") as handle:
            messages += [line.rstrip(b"\r\n") for line in handle if line.strip()]
    return asyncio.run(publish_messages(settings, messages))


Write = Callable[[bytes], Any]


async def _consumer(settings: StreamSettings) -> AIOKafkaConsumer:
    """A started consumer without a group (stopped again if it cannot start)."""
    consumer = AIOKafkaConsumer(bootstrap_servers=settings.kafka_bootstrap(), group_id=None,
                                enable_auto_commit=False, max_partition_fetch_bytes=message_bytes(settings),
                                **security_options(settings))
    try:
        await consumer.start()
    except BaseException:
        await consumer.stop()
        raise
    return consumer


async def _latest(consumer: AIOKafkaConsumer, tps: list[TopicPartition]) -> dict[str, bytes]:
    """The last value of each key on `tps`, from their beginning to their end offsets now."""
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
    return table


async def read_findings(settings: StreamSettings, write: Write, follow: bool = False) -> int:
    """Write the findings (one JSON line each, sorted by id) as they stand now; with `follow`,
    then every new state as it is published (one line each), until cancelled. The count written."""
    consumer = await _consumer(settings)
    try:
        topic = settings.findings_topic
        await consumer.topics()  # the metadata
        tps = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or ())]
        if not tps:
            return 0
        table = await _latest(consumer, tps)
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
    """`read_findings` until it is done or SIGINT/SIGTERM arrives: both end it, even in a process
    started with SIGINT ignored (a shell's background job), where Python installs no handler."""
    async def run() -> int:
        task = asyncio.current_task()
        assert task is not None
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, task.cancel)
        try:
            return await read_findings(settings, write, follow)
        except asyncio.CancelledError:
            return 0

    return asyncio.run(run())
