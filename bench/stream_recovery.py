"""Benchmark a worker's restart: seconds from process start to `/ready`, in-memory tables against
RocksDB (`SUNSET_STORE`), on the changelog the bench's synthetic stream leaves.

Run by hand (never part of the test suite):

    .venv/bin/python bench/stream_recovery.py                  # embedded Tansu broker, 200k events

For each store, in the same run and on the same input topic: a worker (dev profile) processes the
events until its tallies and findings equal the replay's (no time is printed otherwise; its
`/ready`, that time and its CPU time before and after `/ready` are printed), waits
for RocksDB to record the applied changelog offsets (`streams.worker.store.PERSIST_EVERY`), and is
killed (SIGKILL); a new worker on the same data dir is timed from its start to `/ready` (tables
recovered) and to its tallies equal the replay's again.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import subprocess
import sys
import tempfile
import time
import urllib.error
from pathlib import Path
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition
from stream_bench import REPO, bench_replay, cpu_seconds, findings_on_topic, get_json, produce, write_events

from streams.dev import EmbeddedBroker, free_port
from streams.settings import load_settings
from streams.worker.store import PERSIST_EVERY


def start(broker: str, topic: str, app_id: str, store: str, partitions: int, data_dir: Path,
          port: int, lateness: float) -> subprocess.Popen[bytes]:
    env = {**os.environ, "SUNSET_BROKER": broker, "SUNSET_INPUT_TOPIC": topic, "SUNSET_APP_ID": app_id,
           "SUNSET_PARTITIONS": str(partitions), "SUNSET_FINDINGS_TOPIC": f"{app_id}-findings",
           "SUNSET_DEAD_LETTER_TOPIC": f"{app_id}-dead", "SUNSET_ALLOWED_LATENESS": str(lateness),
           "SUNSET_STORE": store}
    command = [sys.executable, "-m", "scanner.cli", "stream", "worker", "--profile", "dev",
               "--web-port", str(port), "--data-dir", str(data_dir)]
    return subprocess.Popen(command, env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def poll(worker: subprocess.Popen[bytes], what: str, check: Any, bound: float = 900.0) -> float:
    """Seconds until `check()` is true (RuntimeError if the worker exits or `bound` passes)."""
    began = time.perf_counter()
    while time.perf_counter() - began < bound:
        if worker.poll() is not None:
            raise RuntimeError(f"the worker exited with {worker.returncode} waiting for {what}")
        try:
            if check():
                return time.perf_counter() - began
        except (OSError, urllib.error.URLError):
            pass
        time.sleep(0.05)
    raise RuntimeError(f"no {what} within {bound:g} s")


def spy_on(worker: subprocess.Popen[bytes], out: Path | None, suffix: str) -> subprocess.Popen[bytes] | None:
    """py-spy sampling `worker` into raw stacks at OUT.suffix, if asked for."""
    if out is None:
        return None
    return subprocess.Popen([str(Path(sys.executable).parent / "py-spy"), "record", "--pid", str(worker.pid),
                             "--rate", "100", "--nonblocking", "--format", "raw", "--output", f"{out}.{suffix}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def ready(port: int) -> bool:
    try:
        return bool(get_json(f"http://127.0.0.1:{port}/ready")["ready"])
    except urllib.error.HTTPError:
        return False  # 503 while recovering


def changelog_records(bootstrap: str, app_id: str, partitions: int) -> int:
    async def run() -> int:
        consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=None)
        await consumer.start()
        try:
            tps = [TopicPartition(f"{app_id}-{table}-changelog", p)
                   for table in ("projects", "actors") for p in range(partitions)]
            return sum((await consumer.end_offsets(tps)).values())
        finally:
            await consumer.stop()

    return asyncio.run(run())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=6)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--lateness", type=float, default=150.0)
    parser.add_argument("--stores", default="memory://,rocksdb://", help="the stores to time, comma-separated")
    parser.add_argument("--py-spy", type=Path, metavar="OUT",
                        help="sample each worker with py-spy: OUT.first.STORE (first run), OUT.STORE (restart)")
    args = parser.parse_args()
    print(f"# sunset stream recovery bench — {platform.python_version()}, {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.2f}, {args.events} events, {args.partitions} partitions")
    with tempfile.TemporaryDirectory(prefix="sunset-recovery-bench-") as tmp:
        path = Path(tmp) / "events.jsonl"
        write_events(path, args.events, args.seed)
        _, doc = bench_replay(path, 1, args.lateness)
        findings = {f["id"]: f for f in doc["findings"]}
        with EmbeddedBroker(log_path=Path(tmp) / "tansu.log") as b:
            bootstrap = load_settings("dev", broker=b.url).kafka_bootstrap()
            topic = f"recovery-input-{os.getpid()}"
            asyncio.run(produce(bootstrap, topic, path.read_bytes().splitlines(), args.partitions))
            for store in args.stores.split(","):
                app_id = f"recovery-{store[:-3]}-{os.getpid()}"
                data_dir, port = Path(tmp) / app_id, free_port()

                def equal(port: int = port, app_id: str = app_id) -> bool:
                    return bool(get_json(f"http://127.0.0.1:{port}/tallies") == doc["downloads"]
                                and findings_on_topic(b.url, f"{app_id}-findings") == findings)

                worker = start(b.url, topic, app_id, store, args.partitions, data_dir, port, args.lateness)
                spy = spy_on(worker, args.py_spy, f"first.{store[:-3]}")
                try:
                    first_ready = poll(worker, "/ready", lambda port=port: ready(port))
                    ready_cpu = cpu_seconds(worker.pid)
                    first = first_ready + poll(worker, "results equal to the replay's", equal)
                    first_cpu = cpu_seconds(worker.pid)
                    time.sleep(PERSIST_EVERY + 1)
                finally:
                    worker.kill()
                    worker.wait()
                    if spy is not None:
                        spy.wait(timeout=60)
                records = changelog_records(bootstrap, app_id, args.partitions)
                worker = start(b.url, topic, app_id, store, args.partitions, data_dir, port, args.lateness)
                spy = spy_on(worker, args.py_spy, store[:-3])
                try:
                    to_ready = poll(worker, "/ready", lambda port=port: ready(port))
                    to_equal = to_ready + poll(worker, "tallies equal again",
                                               lambda port=port: get_json(f"http://127.0.0.1:{port}/tallies")
                                               == doc["downloads"])
                finally:
                    worker.terminate()
                    worker.wait(timeout=30)
                    if spy is not None:
                        spy.wait(timeout=60)
                print(f"{store:11} first run {first:6.1f} s (/ready at {first_ready:.1f} s; CPU {ready_cpu:.1f} s to "
                      f"/ready, {first_cpu - ready_cpu:.1f} s from there); "
                      f"changelog {records} records; after SIGKILL: "
                      f"/ready in {to_ready:.1f} s, tallies equal in {to_equal:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
