"""The Faust application and `sunset stream worker`.

    input topic ──ingest──▶ <app>-by-project (key: project path) ──projects agent──▶ findings
          │                      ▲  (access records)                            ╲
          │                      │                                                ▶ dead letters
          └───────────────▶ <app>-by-actor (key: author id) ──actors agent────▶ findings

`create_app(settings)` builds topics, tables, agents and views; nothing is created at import time.
`ingest` (streams.worker.ingest) parses and routes the input with a plain aiokafka consumer and
sends one newline-delimited message per stage partition per batch. Each stage topic is
partitioned by its key, so one project's (or one user's) events meet in one worker; the tables
`projects` and `actors` are co-partitioned with them and changelog-backed. Agents take messages in
batches (`noack_take`) and acknowledge a batch only after its findings, forwards, dead letters and
changelog records are handed to the producer — which Faust flushes before it commits offsets — so
processing is at-least-once and a crash replays, never skips. An agent that fails outside the
per-event guard crashes the worker (`CrashingSupervisor`) instead of acknowledging what it did not
process.

`run_worker` runs the app until stopped; exit 1 if it crashed. SIGTERM and SIGINT stop it within
`SUNSET_STOP_GRACE` seconds (4): Faust's orderly shutdown first; if that does not finish (a broker
that is down keeps its clients retrying for a minute or more), the process exits anyway. That is
safe: the state is exact after a crash (source coordinates, streams.worker.agents), and a SIGKILL
is the same stop without the grace. A repeating warning (a broker that is down logs the same
connection error hundreds of times a second through aiokafka and Faust) is logged once per
interval (`OncePerInterval`).
"""

from __future__ import annotations

import ctypes
import gc
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import faust
from mode.supervisors import CrashingSupervisor

from streams.kafka import faust_credentials, message_bytes
from streams.metrics import Metrics
from streams.settings import StreamSettings
from streams.worker.agents import ActorHandler, Outputs, ProjectHandler, held_events, lowest_released
from streams.worker.ingest import Ingest, Router, run_ingest
from streams.worker.web import register_views

# A stage message carries up to a route batch's events for one partition (~256 KiB at most):
# a few dozen of them make a large enough batch for one changelog write per key.
STAGE_BATCH_MESSAGES = 64
# Stage messages an agent holds fetched but not yet processed: Faust stops fetching a stage
# partition when its agent's buffer is full, so a backlog waits in Kafka, not in the worker's
# memory (Faust's default, 4,096 such messages of up to 256 KiB, let it grow to ~1 GB).
STAGE_BUFFER_MESSAGES = 2 * STAGE_BATCH_MESSAGES
# The cyclic collector's young-generation threshold (CPython's default is 700 allocations). The
# stages allocate a dict per event and keep many of them (held events, table values), all plain
# JSON values without cycles; at the default, the collector scans them again and again. A young
# collection costs about a microsecond per surviving object, and most of a batch's objects are
# freed by reference counting within the batch: the rarer the collection, the fewer it scans (one
# per ~100,000 events here, ~0.15 s). Cycles (asyncio's futures and tracebacks) are still
# collected, less often.
GC_YOUNG = 200_000
# glibc's allocator maps a block of at least this size on its own, and unmaps it when it is freed.
# By default it raises that threshold to the largest block freed so far (up to 32 MiB): after the
# first Kafka fetch response (several MB) is freed, the next ones are carved from the heap, which
# cannot shrink below what is still in use above them. A fixed threshold gives them back.
MAPPED_FROM = 1024 * 1024
M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter


@dataclass(frozen=True)
class Topology:
    """The topics and tables of one app."""

    input: Any
    by_project: Any
    by_actor: Any
    findings: Any
    dead_letters: Any
    projects: Any
    actors: Any


def _faust_config(settings: StreamSettings) -> dict[str, Any]:
    return {
        "broker": settings.broker,
        "store": settings.store,
        "Table": "streams.worker.store:Table",  # sunset's stores (streams.worker.store)
        "datadir": str(settings.data_dir),
        "topic_partitions": settings.partitions,
        "topic_replication_factor": settings.replication_factor,
        "processing_guarantee": "at_least_once",
        "consumer_auto_offset_reset": "earliest",
        "key_serializer": "raw",
        "value_serializer": "raw",
        "web_enabled": True,
        "web_bind": settings.web_host,
        "web_host": settings.web_host,
        "web_port": settings.web_port,
        "table_standby_replicas": 0 if settings.profile == "dev" else 1,
        "producer_max_request_size": message_bytes(settings),  # a dead letter carries a whole event
        "broker_credentials": faust_credentials(settings),
        "consumer_max_fetch_size": max(4 * 1024 * 1024, message_bytes(settings)),
        "stream_buffer_maxsize": STAGE_BUFFER_MESSAGES,
        **settings.broker_overrides(),
    }


def _topology(app: faust.App, settings: StreamSettings) -> Topology:
    sized = {"max.message.bytes": message_bytes(settings)}  # one event up to the receiver's body cap

    def topic(name: str) -> Any:
        return app.topic(name, partitions=settings.partitions, internal=True,
                         key_serializer="raw", value_serializer="raw", config=sized)

    def table(name: str) -> Any:
        return app.Table(name, partitions=settings.partitions)  # JSON keys and values: plain dicts

    return Topology(
        input=topic(settings.input_topic),
        by_project=topic(f"{settings.app_id}-by-project"),
        by_actor=topic(f"{settings.app_id}-by-actor"),
        findings=topic(settings.findings_topic),
        dead_letters=topic(settings.dead_letter_topic),
        projects=table("projects"),
        actors=table("actors"),
    )


def create_app(settings: StreamSettings) -> faust.App:
    """A Faust app for these settings; nothing is created at import time."""
    app = faust.App(settings.app_id, **_faust_config(settings))
    setattr(app, "sunset_settings", settings)  # noqa: B010 - what the stores' own changelog reading needs (streams.worker.store)
    topology = _topology(app, settings)
    metrics = Metrics()
    outputs = Outputs(topology.findings, topology.dead_letters, metrics)
    projects = ProjectHandler(settings, topology.projects, outputs)
    actors = ActorHandler(settings, topology.actors, topology.by_project, outputs)

    def agent(channel: Any, name: str, handle: Any) -> None:
        async def run(stream: Any) -> None:
            async for events in stream.noack_take(STAGE_BATCH_MESSAGES, settings.batch_within):
                await handle(events)
                for event in events:
                    await stream.ack(event)

        run.__name__ = name
        app.agent(channel, name=name, supervisor_strategy=CrashingSupervisor)(run)

    agent(topology.by_project, "projects", projects.handle)
    agent(topology.by_actor, "actors", actors.handle)
    register_views(app, topology.projects, topology.actors, metrics)

    @app.on_partitions_assigned.connect
    async def _reindex(sender: Any, /, *args: Any, signal: Any, **kwargs: Any) -> None:
        """Partitions moved: each handler rebuilds its index of held events from the recovered table."""
        projects.forget()
        actors.forget()

    _add_ingest(app, settings, topology, outputs, lambda: lowest_released(projects, actors),
                lambda: held_events(projects, actors))
    return app


def _add_ingest(app: faust.App, settings: StreamSettings, topology: Topology, outputs: Outputs,
                released: Callable[[], float | None], held: Callable[[], int]) -> None:
    """Ingest as a task of the app, stopped before the app's producer; it waits while the stages
    hold many events and lag behind it (`released`: how far they are; `held`: how many)."""
    ingest = Ingest(settings, Router(settings, topology.by_project, topology.by_actor, outputs), released, held)

    async def run() -> None:
        topics = [topology.input, topology.by_project, topology.by_actor, topology.findings, topology.dead_letters]
        await run_ingest(app, ingest, topics)

    @app.on_before_shutdown.connect
    async def _stop_ingest(sender: Any, /, *args: Any, **kwargs: Any) -> None:
        """Faust sends this after its consumer stopped and before its producer does: ingest ends
        first, having committed what it forwarded (it would otherwise send to a stopped producer)."""
        await ingest.stop(settings.stop_grace)

    app.task(run)


class _Worker(faust.Worker):
    grace = 4.0

    def _on_sigterm(self) -> None:
        self._deadline()
        super()._on_sigterm()

    def _on_sigint(self) -> None:
        self._deadline()
        super()._on_sigint()

    def _deadline(self) -> None:
        timer = threading.Timer(self.grace, os._exit, args=(0,))
        timer.daemon = True
        timer.start()

    def on_setup_root_logger(self, logger: logging.Logger, level: int) -> None:
        super().on_setup_root_logger(logger, level)
        limit_repeats(logger)  # one line per interval while the broker is down, not hundreds a second


def run_worker(settings: StreamSettings, loglevel: str = "warning",
               extend: Callable[[faust.App], Any] | None = None) -> int:
    """Blocks until SIGINT/SIGTERM (exit 0) or a crash (exit 1, so a supervisor restarts it).
    `extend` adds work to the app before it starts (`sunset instance worker`: the instance scan)."""
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    app = create_app(settings)
    if extend is not None:
        extend(app)
    worker = _Worker(app, loglevel=loglevel, quiet=True, redirect_stdouts=False)
    worker.grace = settings.stop_grace
    # Faust's terminal spinner lowers the root logger to DEBUG so it can spin on every record;
    # aiokafka then builds a debug record per message sent. No spinner, no per-message logging.
    worker.spinner = None
    collect_less()
    map_big_blocks()
    code: int | str | None = 0
    try:
        worker.execute_from_commandline()
    except SystemExit as exc:
        code = exc.code
    if app.crashed:
        return 1
    return code if isinstance(code, int) else 1


def collect_less() -> None:
    """Before the worker runs: what is loaded by now (modules, the app) stays for the process's
    life and is never scanned again (`gc.freeze`; reference counting still frees it), and young
    objects are collected every `GC_YOUNG` allocations."""
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(GC_YOUNG, middle, old)


def map_big_blocks() -> bool:
    """Before the worker runs, on glibc: blocks of `MAPPED_FROM` bytes or more go back to the system
    when freed, so the resident size follows what the worker holds (see `MAPPED_FROM`); whether the
    C library took the setting (False elsewhere: musl or macOS keep their own rules)."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MAPPED_FROM))


INTERVAL = 10.0  # seconds between two records of the same kind


class OncePerInterval(logging.Filter):
    """Pass the first record of each (logger, level, message template) per `interval`; the next
    one that passes says how many were held back meanwhile."""

    def __init__(self, interval: float = INTERVAL) -> None:
        super().__init__()
        self.interval = interval
        self.last: dict[tuple[str, int, str], tuple[float, int]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        key = (record.name, record.levelno, str(record.msg)[:200])
        now = time.monotonic()
        since, held = self.last.get(key, (float("-inf"), 0))
        if now - since < self.interval:
            self.last[key] = (since, held + 1)
            return False
        self.last[key] = (now, 0)
        if held:
            record.msg = f"{record.msg} ({held} more like this in the last {now - since:.0f} s)"
        return True


def limit_repeats(logger: logging.Logger, interval: float = INTERVAL) -> None:
    """Install the filter on every handler of `logger` (the root logger, once it is set up)."""
    for handler in logger.handlers:
        if not any(isinstance(f, OncePerInterval) for f in handler.filters):
            handler.addFilter(OncePerInterval(interval))
