"""Benchmark `sunset stream`: the offline replay, and the worker against the raw consume rate.

Run by hand (never part of the test suite):

    .venv/bin/python bench/stream_bench.py                 # embedded Tansu broker, 200k events
    .venv/bin/python bench/stream_bench.py --events 500000 --broker kafka://host:9092

One run generates a deterministic synthetic stream (`stream_events.py`) and measures, on the
same events and in the same run:

* replay     — `replay_file` in-process over the JSONL file (best of --repeat); with --memory,
               the peak RSS of a replay at 1x and 4x the events;
* raw        — aiokafka consuming the input topic from the beginning, no processing: the floor;
* worker     — a `sunset stream worker` process (dev profile on Tansu) consuming the same topic
               (published keyed by entity_path, as the receiver does) with state, until its
               tallies and its findings topic equal the replay document's — no speed is printed
               otherwise: events/s from its first progress to that point (which includes the 2 s
               the dev profile waits before it calls the drained input idle and releases the
               last events), and from process start (start-up, group join, recovery); the
               worker's CPU time meanwhile and its changelog records per event.

`--worker-from CHECKOUT` runs the worker of another checkout (an A/B run against a baseline,
with the same input, broker and harness); `--py-spy OUT` samples the worker with py-spy (when it is
installed: `pip install py-spy`) into raw stacks, one line per stack with its count.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from stream_events import generate

from streams.dev import EmbeddedBroker, free_port
from streams.kafka import message_key, read_findings
from streams.replay import replay_file
from streams.settings import DetectorSettings, load_settings

REPO = Path(__file__).resolve().parent.parent


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=6)
    parser.add_argument("--repeat", type=int, default=3, help="replay runs; the best is kept")
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--broker", help="kafka://host:port of a running broker (default: start Tansu)")
    parser.add_argument("--no-worker", action="store_true", help="replay only")
    parser.add_argument("--memory", action="store_true", help="peak RSS of the replay at 1x and 4x the events")
    parser.add_argument("--worker-from", type=Path, default=REPO, metavar="CHECKOUT",
                        help="run the worker of another checkout of sunset (an A/B run against a baseline)")
    parser.add_argument("--py-spy", type=Path, metavar="OUT",
                        help="profile the worker with py-spy (if installed): raw stacks to OUT")
    parser.add_argument("--lateness", type=float, default=150.0,
                        help="allowed lateness, replay and worker (the synthetic scrapes emit 2 minutes of "
                             "clones at once; default 150 s)")
    return parser.parse_args()


def write_events(path: Path, n: int, seed: int) -> int:
    with path.open("wb") as out:
        for event in generate(n, seed):
            out.write(json.dumps(event).encode() + b"\n")
    return path.stat().st_size


def bench_replay(path: Path, repeat: int, lateness: float) -> tuple[float, dict[str, Any]]:
    """The best time of `repeat` replays, and the document (the same every time, or no speed)."""
    best, first = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        doc = replay_file(path, DetectorSettings(allowed_lateness=lateness))
        best = min(best, time.perf_counter() - start)
        if first is not None and doc != first:
            raise SystemExit("replay: two runs gave different documents; no speed printed")
        first = doc
    assert first is not None
    return best, first


def replay_memory(path: Path) -> tuple[float, dict[str, int]]:
    """Peak RSS (MB) of a fresh process replaying `path` in-process, and its stats."""
    code = ("import json, resource, sys; from pathlib import Path; from streams.replay import replay_file; "
            "from streams.settings import DetectorSettings; "
            "doc = replay_file(Path(sys.argv[1]), DetectorSettings()); "
            "print(json.dumps([resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, doc['stats']]))")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True, cwd=REPO)
    peak, stats = json.loads(out.stdout)
    return peak, stats


async def produce(bootstrap: str, topic: str, lines: list[bytes], partitions: int) -> float:
    from aiokafka import AIOKafkaProducer
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    await admin.create_topics([NewTopic(topic, partitions, 1)])
    await admin.close()
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=20, max_batch_size=256 * 1024)
    await producer.start()
    start = time.perf_counter()
    futures = [await producer.send(topic, line, key=message_key(line)) for line in lines]  # as the receiver keys
    await asyncio.gather(*futures)
    await producer.stop()
    return time.perf_counter() - start


async def raw_consume(bootstrap: str, topic: str, n: int) -> float:
    from aiokafka import AIOKafkaConsumer

    consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest",
                                enable_auto_commit=False, group_id=None, max_partition_fetch_bytes=8 * 1024 * 1024)
    await consumer.start()
    start, got = time.perf_counter(), 0
    while got < n:
        batches = await consumer.getmany(timeout_ms=1000, max_records=20_000)
        got += sum(len(messages) for messages in batches.values())
    elapsed = time.perf_counter() - start
    await consumer.stop()
    return elapsed


def metrics(port: int) -> dict[str, float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        text = response.read().decode()
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            out[name] = float(value)
    return out


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


def findings_on_topic(broker: str, topic: str) -> dict[str, Any]:
    """The findings topic read as a table (`sunset stream findings`)."""
    lines: list[bytes] = []
    asyncio.run(read_findings(load_settings("dev", broker=broker, findings_topic=topic), lines.append))
    return {finding["id"]: finding for finding in map(json.loads, lines)}


def done(m: dict[str, float], n: int, port: int, broker: str, prefix: str, doc: dict[str, Any]) -> bool:
    """Every input message read, and the worker's tallies and findings equal to the replay's."""
    if m.get('sunset_stream_messages_total{stage="route"}', 0) < n:
        return False
    if get_json(f"http://127.0.0.1:{port}/tallies") != doc["downloads"]:
        return False
    return findings_on_topic(broker, f"{prefix}-findings") == {f["id"]: f for f in doc["findings"]}


def bench_worker(broker: str, topic: str, n: int, partitions: int, data_dir: Path, doc: dict[str, Any],
                 lateness: float, checkout: Path = REPO, py_spy: Path | None = None,
                 bound: float = 900.0) -> dict[str, float]:
    """The worker (of `checkout`) until its results equal the replay document's (RuntimeError
    after `bound` s); with `py_spy`, sampled by py-spy meanwhile."""
    port, app_id = free_port(), f"bench-{os.getpid()}"
    env = {**os.environ, "SUNSET_BROKER": broker, "SUNSET_INPUT_TOPIC": topic, "SUNSET_APP_ID": app_id,
           "SUNSET_PARTITIONS": str(partitions), "SUNSET_FINDINGS_TOPIC": f"{app_id}-findings",
           "SUNSET_DEAD_LETTER_TOPIC": f"{app_id}-dead", "SUNSET_ALLOWED_LATENESS": str(lateness),
           "PYTHONPATH": str(checkout)}
    command = [sys.executable, "-m", "scanner.cli", "stream", "worker", "--profile", "dev",
               "--web-port", str(port), "--data-dir", str(data_dir)]
    launched = time.perf_counter()
    worker = subprocess.Popen(command, env=env, cwd=checkout, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    spy = None
    if py_spy is not None:
        spy = subprocess.Popen([str(Path(sys.executable).parent / "py-spy"), "record", "--pid", str(worker.pid),
                                "--rate", "200", "--nonblocking", "--format", "raw", "--output", str(py_spy)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    first, first_cpu = None, 0.0
    try:
        while True:
            if worker.poll() is not None:
                raise RuntimeError(f"worker exited with {worker.returncode}")
            try:
                m = metrics(port)
            except OSError:
                time.sleep(0.05)
                continue
            if first is None and m.get('sunset_stream_messages_total{stage="route"}', 0) > 0:
                first, first_cpu = time.perf_counter(), cpu_seconds(worker.pid)
            if done(m, n, port, broker, app_id, doc):
                end, end_cpu = time.perf_counter(), cpu_seconds(worker.pid)
                break
            if time.perf_counter() - launched > bound:
                raise RuntimeError(f"the worker's results did not equal the replay's within {bound:g} s")
            time.sleep(0.2)
    finally:
        worker.terminate()
        worker.wait(timeout=30)
        if spy is not None:
            spy.wait(timeout=60)  # it writes its file once the worker is gone
    assert first is not None
    return {"processing_s": end - first, "wall_s": end - launched, "cpu_s": end_cpu - first_cpu,
            "changelog_writes": sum(v for k, v in m.items() if k.startswith("sunset_stream_changelog_writes_total")),
            "findings": sum(v for k, v in m.items() if k.startswith("sunset_stream_findings_total"))}


def main() -> int:
    args = parse_args()
    print(f"# sunset stream bench — {platform.python_version()}, {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.2f}, {args.events} events, seed {args.seed}, worker from {args.worker_from}")
    with tempfile.TemporaryDirectory(prefix="sunset-stream-bench-") as tmp:
        path = Path(tmp) / "events.jsonl"
        size = write_events(path, args.events, args.seed)
        print(f"input: {size / 1e6:.1f} MB, {size / args.events:.0f} bytes/event")
        seconds, doc = bench_replay(path, args.repeat, args.lateness)
        print(f"replay: {args.events / seconds:,.0f} events/s ({seconds:.2f} s, best of {args.repeat}); "
              f"stats {doc['stats']}")
        if args.memory:
            for factor in (1, 4):
                bigger = Path(tmp) / f"events-x{factor}.jsonl"
                write_events(bigger, args.events * factor, args.seed)
                peak, stats = replay_memory(bigger)
                print(f"replay memory, {args.events * factor} events: peak RSS {peak:.0f} MB; users tracked "
                      f"{stats['users']}, expired {stats['users_expired']}, projects {stats['projects']}, "
                      f"findings {stats['findings']}")
                bigger.unlink()
        if args.no_worker:
            return 0
        lines = path.read_bytes().splitlines()
        with EmbeddedBroker(log_path=Path(tmp) / "tansu.log") if not args.broker else _External(args.broker) as b:
            settings = load_settings("dev", broker=b.url)
            topic = f"bench-input-{os.getpid()}"
            produced = asyncio.run(produce(settings.kafka_bootstrap(), topic, lines, args.partitions))
            print(f"produce (setup): {args.events / produced:,.0f} msg/s")
            raw = asyncio.run(raw_consume(settings.kafka_bootstrap(), topic, args.events))
            print(f"raw aiokafka consume: {args.events / raw:,.0f} msg/s ({raw:.2f} s)")
            w = bench_worker(b.url, topic, args.events, args.partitions, Path(tmp) / "worker", doc, args.lateness,
                             args.worker_from.resolve(), args.py_spy)
            print("worker results: tallies and findings equal the replay's")
            print(f"worker end to end: {args.events / w['processing_s']:,.0f} events/s "
                  f"({w['processing_s']:.2f} s processing; {w['wall_s']:.2f} s from process start; "
                  f"{w['changelog_writes']:.0f} changelog writes, {w['findings']:.0f} finding records)")
            share = w["cpu_s"] / w["processing_s"]
            print(f"worker CPU while processing: {w['cpu_s']:.2f} s ({share:.0%} of one core); "
                  f"{w['changelog_writes'] / args.events:.2f} changelog records per event")
            print(f"worker / raw: {raw / w['processing_s']:.3f}")
    return 0


class _External:
    def __init__(self, url: str) -> None:
        self.url = url

    def __enter__(self) -> _External:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


if __name__ == "__main__":
    sys.exit(main())
