"""`sunset stream publish`: lines of a JSONL file (and snapshot records) to the input topic.

Lines go as they are, one message each — the worker, not this command, decides what is a dead
letter — so publishing a file and replaying it see the same input. Each is keyed like the receiver
keys GitLab's events (`entity_path`; a snapshot record by its `project`), so the input partitions
hold what they would hold in production.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import orjson

from streams.kafka import ensure_topics, new_producer
from streams.settings import StreamSettings
from streams.snapshot import load_records


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
    messages = [json.dumps(r).encode() for r in load_records(snapshot)] if snapshot else []
    if events is not None:
        with events.open("rb") as handle:
            messages += [line.rstrip(b"\r\n") for line in handle if line.strip()]
    return asyncio.run(publish_messages(settings, messages))
