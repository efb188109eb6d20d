"""Benchmark `sunset stream` against its floors, in one run, on one input, results checked first.

Run by hand (never part of the test suite):

    .venv/bin/python bench/stream_bench.py                       # embedded Tansu broker, 200k events
    .venv/bin/python bench/stream_bench.py --events 1000000 --worker-partitions 8 --scale ""   # memory at 1M

One run generates a deterministic synthetic stream (`stream_events.py`) and measures, on the same
events:

* floor and replay — `bench/stream_floor.py` (a hand-written loop with the replay's semantics) and
  `replay_file`, alternating, CPU time (best of --repeat); both documents must be equal, and equal
  between runs, before any speed is printed. The target: replay >= 0.85 of the floor's events/s.
* replay A/B — with `--replay-from CHECKOUT`, the replay of another checkout in a subprocess,
  alternating with this one's (the same input, CPU time).
* raw — aiokafka consuming the input topic, no processing.
* worker — a `sunset stream worker` process (dev profile on Tansu) on 1 and on 8 input partitions
  (`--worker-partitions`), published keyed by entity_path as the receiver does, until its tallies
  and findings topic equal the replay document's: events/s of wall clock (from its first progress;
  includes the 2 s the dev profile waits before calling the drained input idle), events per
  second of the worker's CPU time, and both as a ratio to the replay's events per CPU second (the
  targets: >= 0.5 on 1 partition, >= 0.4 on 8): to the run's best replay, and to a replay run in a
  fresh process just before that worker run (on a shared machine the replay's own figure moves by
  half between runs; `--worker-repeat N` gives N such pairs and their median); its peak RSS (VmHWM),
  changelog records per event and stage batches.
* scale-out — N workers of one app on M input and stage partitions (`--scale 1x4,2x4`): events/s of
  the slowest worker's wall clock, per worker, CPU time per worker, and the N-worker / 1-worker
  ratio (on a 2-vCPU machine the workers share the CPUs with the broker: the CPU times show it).

`--worker-from CHECKOUT` makes every worker run an A/B: the workers of another checkout (A) and of
this one (B), alternating, on the same input topic, each until its results equal the replay document
of ITS OWN checkout (the other checkout's replay runs in a subprocess there: detectors and findings
may differ between versions, and a worker is judged against its own version's replay); then events
per CPU second of A and of B and B / A (`--worker-repeat N`: N rounds, the order alternating; the
best and the median of each, and the geometric mean of B / A round by round with its spread: one
worker's CPU time per event moves by 10-30 % from run to run). `--worker-to CHECKOUT` makes B
another checkout's worker too (the A/B of one commit: `--worker-from` a checkout of its parent,
`--worker-to` one of the commit). `--stores memory://,rocksdb://` runs each worker run once per
store, on the same input topic (the store's cost per event); `--py-spy OUT` samples the first worker
(of each store) with py-spy (`pip install py-spy`) into raw stacks.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any, NamedTuple

from stream_events import generate
from stream_floor import floor_replay

from streams.dev import EmbeddedBroker, free_port
from streams.kafka import message_key, read_findings
from streams.replay import replay_file
from streams.settings import DetectorSettings, load_settings

REPO = Path(__file__).resolve().parent.parent


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=6)
    parser.add_argument("--repeat", type=int, default=3, help="floor and replay runs, alternating; the best is kept")
    parser.add_argument("--worker-partitions", default="1,8", help="input partitions of the single-worker runs")
    parser.add_argument("--scale", default="1x4,2x4", help="scale-out runs: WORKERSxPARTITIONS, comma-separated")
    parser.add_argument("--replay-from", type=Path, metavar="CHECKOUT", help="A/B: the replay of another checkout")
    parser.add_argument("--broker", help="kafka://host:port of a running broker (default: start Tansu)")
    parser.add_argument("--no-worker", action="store_true", help="floor and replay only")
    parser.add_argument("--memory", action="store_true", help="peak RSS of the replay at 1x and 4x the events")
    parser.add_argument("--worker-from", type=Path, metavar="CHECKOUT",
                        help="A/B: each worker run also with the worker of another checkout, alternating, "
                             "each checked against its own checkout's replay")
    parser.add_argument("--worker-to", type=Path, metavar="CHECKOUT",
                        help="with --worker-from: B is the worker of this checkout instead of this one's "
                             "(its replay run there too)")
    parser.add_argument("--worker-repeat", type=int, default=1,
                        help="rounds of each worker run (with --worker-from: of A and B, order alternating); best "
                             "and median compared")
    parser.add_argument("--bound", type=float, default=1800.0,
                        help="seconds a worker run may take to equal its replay's results before the bench fails")
    parser.add_argument("--py-spy", type=Path, metavar="OUT",
                        help="profile the worker with py-spy (if installed): raw stacks to OUT (OUT.STORE with "
                             "several --stores)")
    parser.add_argument("--stores", default="memory://",
                        help="the workers' stores, comma-separated (memory://, rocksdb://): every worker run "
                             "once per store, on the same input topic")
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
    """The best CPU time of `repeat` replays, and the document (the same every time, or no speed)."""
    best, first = float("inf"), None
    for _ in range(repeat):
        start = time.process_time()
        doc = replay_file(path, DetectorSettings(allowed_lateness=lateness))
        best = min(best, time.process_time() - start)
        if first is not None and doc != first:
            raise SystemExit("replay: two runs gave different documents; no speed printed")
        first = doc
    assert first is not None
    return best, first


def floor_and_replay(path: Path, repeat: int, lateness: float) -> tuple[float, float, dict[str, Any]]:
    """Best CPU seconds of the floor and of the replay, alternating; the replay's document, which the
    floor's must equal (no speed is printed otherwise)."""
    best_floor, best_replay, doc = float("inf"), float("inf"), None
    for _ in range(repeat):
        start = time.process_time()
        floor = floor_replay(path, DetectorSettings(allowed_lateness=lateness))
        best_floor = min(best_floor, time.process_time() - start)
        seconds, replay = bench_replay(path, 1, lateness)
        best_replay = min(best_replay, seconds)
        if floor != replay or (doc is not None and replay != doc):
            raise SystemExit("the floor's document is not the replay's; no speed printed")
        doc = replay
    assert doc is not None
    return best_floor, best_replay, doc


AB_CODE = """
import json, sys, time
from pathlib import Path
from streams.replay import replay_file
from streams.settings import DetectorSettings
start = time.process_time()
doc = replay_file(Path(sys.argv[1]), DetectorSettings(allowed_lateness=float(sys.argv[2])))
cpu = time.process_time() - start
if len(sys.argv) > 3:
    Path(sys.argv[3]).write_text(json.dumps(doc))
print(json.dumps({"cpu": cpu, "stats": doc["stats"]}))
"""


def checkout_env(checkout: Path) -> dict[str, str]:
    """The environment that imports `checkout`'s code first (ahead of this venv's editable install)."""
    return {**os.environ, "PYTHONPATH": str(checkout)}


def checkout_replay(path: Path, checkout: Path, lateness: float, out: Path) -> tuple[float, dict[str, Any]]:
    """The CPU seconds and the replay document of `checkout` (run there, in a fresh process) for `path`."""
    done = subprocess.run([sys.executable, "-c", AB_CODE, str(path), str(lateness), str(out)], capture_output=True,
                          text=True, check=True, cwd=checkout, env=checkout_env(checkout))
    doc: dict[str, Any] = json.loads(out.read_text())
    return float(json.loads(done.stdout)["cpu"]), doc


def document_differences(a: dict[str, Any], b: dict[str, Any]) -> str:
    """What differs between two replay documents, in a line ("none" when they are equal)."""
    parts = [f"key {key!r} only in {'A' if key in a else 'B'}" for key in sorted(set(a) ^ set(b))]
    for key in sorted(set(a) & set(b)):
        if a[key] == b[key]:
            continue
        if key == "findings":
            fa, fb = ({f["id"]: f for f in doc[key]} for doc in (a, b))
            changed = sum(1 for i in fa.keys() & fb.keys() if fa[i] != fb[i])
            parts.append(f"findings: {len(fa)} in A, {len(fb)} in B, {len(fa.keys() - fb.keys())} only in A, "
                         f"{len(fb.keys() - fa.keys())} only in B, {changed} of the same id differ")
        else:
            parts.append(f"{key} differ")
    return "; ".join(parts) or "none"


def replay_ab(path: Path, checkout: Path, repeat: int, lateness: float) -> tuple[float, float]:
    """Best CPU seconds of another checkout's replay (A) and of this one's (B), each in a fresh
    process, alternating on the same input."""
    best = {"A": float("inf"), "B": float("inf")}
    for _ in range(repeat):
        for name, where in (("A", checkout), ("B", REPO)):
            done = subprocess.run([sys.executable, "-c", AB_CODE, str(path), str(lateness)], capture_output=True,
                                  text=True, check=True, cwd=where, env=checkout_env(where))
            best[name] = min(best[name], json.loads(done.stdout)["cpu"])
    return best["A"], best["B"]


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


def cpu_seconds(pid: int, system: bool = False) -> float:
    """User + system CPU time of a process so far (`system`: the system part only; Linux /proc; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[12]) + (0 if system else int(fields[11]))) / os.sysconf("SC_CLK_TCK")


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


def findings_on_topic(broker: str, topic: str) -> dict[str, Any]:
    """The findings topic read as a table (`sunset stream findings`)."""
    lines: list[bytes] = []
    asyncio.run(read_findings(load_settings("dev", broker=broker, findings_topic=topic), lines.append))
    return {finding["id"]: finding for finding in map(json.loads, lines)}


def peak_rss_mb(pid: int) -> float:
    """A process's peak resident memory so far (Linux VmHWM), in MB; 0 elsewhere."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def unsettled(ports: list[int], scraped: list[dict[str, float]], n: int, broker: str, prefix: str,
              doc: dict[str, Any]) -> str | None:
    """What still differs from the replay document `doc` (None once every input message is routed and
    the workers' tallies, together, and the findings topic equal the document's); `scraped`: each
    worker's metrics, just read."""
    routed = sum(m.get('sunset_stream_messages_total{stage="route"}', 0) for m in scraped)
    if routed < n:
        return f"{routed:g} of {n} messages routed"
    held = sum(v for m in scraped for k, v in m.items() if k.startswith("sunset_stream_held_events"))
    if held:  # the results cannot be complete yet; /tallies walks the whole table: not asked for nothing
        return f"{held:g} events still held"
    tallies: dict[str, Any] = {}
    for port in ports:
        tallies.update(get_json(f"http://127.0.0.1:{port}/tallies"))
    if tallies != doc["downloads"]:
        return (f"tallies of {len(tallies)} projects, the replay's of {len(doc['downloads'])}; "
                f"{sum(1 for k, v in tallies.items() if doc['downloads'].get(k) != v)} differ")
    found = findings_on_topic(broker, f"{prefix}-findings")
    expected = {f["id"]: f for f in doc["findings"]}
    if found != expected:
        return (f"{len(found)} findings on the topic, the replay has {len(expected)}: "
                f"{len(found.keys() - expected.keys())} not in the replay, {len(expected.keys() - found.keys())} "
                f"missing, {sum(1 for i in found.keys() & expected.keys() if found[i] != expected[i])} differ")
    return None


def log_tail(path: Path, lines: int = 20) -> str:
    """The last lines of a worker's log (stderr), for an error message."""
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError as error:
        return f"(no log: {error})"


def bench_workers(broker: str, topic: str, n: int, workers: int, partitions: int, data_dir: Path,
                  doc: dict[str, Any], lateness: float, checkout: Path = REPO, py_spy: Path | None = None,
                  bound: float = 1800.0, store: str = "memory://") -> dict[str, Any]:
    """`workers` processes of one app (of `checkout`, tables in `store`) on `partitions` stage
    partitions, until their results equal the replay document `doc` (RuntimeError after `bound` s,
    with the tail of the first worker's log); per worker its CPU seconds and peak RSS from its first
    progress to then."""
    app_id = f"bench-{os.getpid()}-{workers}x{partitions}-{time.monotonic_ns() % 100_000}"
    env = {**checkout_env(checkout), "SUNSET_BROKER": broker, "SUNSET_INPUT_TOPIC": topic, "SUNSET_APP_ID": app_id,
           "SUNSET_PARTITIONS": str(partitions), "SUNSET_FINDINGS_TOPIC": f"{app_id}-findings",
           "SUNSET_DEAD_LETTER_TOPIC": f"{app_id}-dead", "SUNSET_ALLOWED_LATENESS": str(lateness),
           "SUNSET_STORE": store}
    ports = [free_port() for _ in range(workers)]
    data_dir.mkdir(parents=True, exist_ok=True)
    logs = [data_dir / f"w{i}.log" for i in range(workers)]
    launched = time.perf_counter()
    procs = []
    for i, port in enumerate(ports):
        with logs[i].open("wb") as log:
            procs.append(subprocess.Popen([sys.executable, "-m", "scanner.cli", "stream", "worker", "--profile", "dev",
                                           "--web-port", str(port), "--data-dir", str(data_dir / f"w{i}")],
                                          env=env, cwd=checkout, stdout=subprocess.DEVNULL, stderr=log))
    spy = None
    if py_spy is not None:
        spy = subprocess.Popen([str(Path(sys.executable).parent / "py-spy"), "record", "--pid", str(procs[0].pid),
                                "--rate", "200", "--nonblocking", "--format", "raw", "--output", str(py_spy)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    first: float | None = None
    started = 0.0
    # CPU and processing time are counted from the last scrape that saw nothing routed yet (start-up
    # done, no event read): scraped every 20 ms until the first event is routed, so the routing of
    # the first events is counted too; then twice a second (a scrape costs the worker a few ms).
    first_cpu: list[float] = []
    first_sys: list[float] = []
    waiting = "no progress yet"
    try:
        while True:
            for proc in procs:
                if proc.poll() is not None:
                    raise RuntimeError(f"a worker of {checkout} exited with {proc.returncode}:\n{log_tail(logs[0])}")
            now, cpu_now = time.perf_counter(), [cpu_seconds(proc.pid) for proc in procs]
            sys_now = [cpu_seconds(proc.pid, system=True) for proc in procs]
            try:
                scraped = [metrics(port) for port in ports]
            except OSError:
                time.sleep(0.02)
                continue
            routed = sum(m.get('sunset_stream_messages_total{stage="route"}', 0) for m in scraped)
            if first is None:
                if routed == 0 or not first_cpu:  # no baseline before the first event: the first answer's
                    started, first_cpu, first_sys = now, cpu_now, sys_now
                if routed == 0:
                    time.sleep(0.02)
                    continue
                first = started
                if first_cpu is cpu_now:
                    print(f"  (the worker routed {routed:g} events before it first answered: their CPU is not "
                          "counted)")
            if first is not None:
                pending = unsettled(ports, scraped, n, broker, app_id, doc)
                if pending is None:
                    end = time.perf_counter()
                    cpu = [cpu_seconds(proc.pid) - c for proc, c in zip(procs, first_cpu, strict=True)]
                    system = sum(cpu_seconds(p.pid, system=True) - c for p, c in zip(procs, first_sys, strict=True))
                    rss = [peak_rss_mb(proc.pid) for proc in procs]
                    m = [metrics(port) for port in ports]
                    break
                waiting = pending
            if time.perf_counter() - launched > bound:
                raise RuntimeError(f"the results of the workers of {checkout} did not equal its replay's within "
                                   f"{bound:g} s ({waiting}); the log's tail:\n{log_tail(logs[0])}")
            time.sleep(0.5)
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=30)
        if spy is not None:
            spy.wait(timeout=60)  # it writes its file once the worker is gone
    assert first is not None
    return {"processing_s": end - first, "wall_s": end - launched, "cpu_s": cpu, "system_s": system, "rss_mb": rss,
            "changelog_writes": sum(v for x in m for k, v in x.items()
                                    if k.startswith("sunset_stream_changelog_writes_total")),
            "batches": {stage: sum(x.get(f'sunset_stream_batches_total{{stage="{stage}"}}', 0) for x in m)
                        for stage in ("route", "actors", "projects")}}


def main() -> int:  # noqa: PLR0915 - one run, printed in order
    args = parse_args()
    print(f"# sunset stream bench — {platform.python_version()}, {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.2f}, {args.events} events, seed {args.seed}"
          f"{f', worker A/B against {args.worker_from}' if args.worker_from else ''}")
    with tempfile.TemporaryDirectory(prefix="sunset-stream-bench-") as tmp:
        path = Path(tmp) / "events.jsonl"
        size = write_events(path, args.events, args.seed)
        print(f"input: {size / 1e6:.1f} MB, {size / args.events:.0f} bytes/event")
        floor_s, replay_s, doc = floor_and_replay(path, args.repeat, args.lateness)
        replay_rate = args.events / replay_s
        print(f"floor and replay: documents equal; floor {args.events / floor_s:,.0f} events/s of CPU "
              f"({floor_s:.2f} s), replay {replay_rate:,.0f} events/s of CPU ({replay_s:.2f} s), best of "
              f"{args.repeat}; replay / floor {floor_s / replay_s:.3f} (target >= 0.85); stats {doc['stats']}")
        if args.replay_from:
            a, b = replay_ab(path, args.replay_from.resolve(), args.repeat, args.lateness)
            print(f"replay A/B (CPU s, best of {args.repeat}): A {args.replay_from} {a:.2f}, B this checkout {b:.2f}; "
                  f"B / A {b / a:.3f}")
        if args.memory:
            for factor in (1, 4):
                bigger = Path(tmp) / f"events-x{factor}.jsonl"
                write_events(bigger, args.events * factor, args.seed)
                peak, stats = replay_memory(bigger)
                print(f"replay memory, {args.events * factor} events: peak RSS {peak:.0f} MB; users tracked "
                      f"{stats['users']}, expired {stats['users_expired']}, projects {stats['projects']}")
                bigger.unlink()
        if args.no_worker:
            return 0
        sides = [Side("B", REPO, doc, replay_rate)]
        if args.worker_from and args.worker_to:
            cpu, doc_b = checkout_replay(path, args.worker_to.resolve(), args.lateness, Path(tmp) / "replay-b.json")
            sides = [Side("B", args.worker_to.resolve(), doc_b, args.events / cpu)]
            print(f"replay of B ({sides[0].checkout}): {args.events / cpu:,.0f} events/s of CPU (one run, a fresh "
                  f"process); how its document differs from this checkout's: {document_differences(doc_b, doc)}")
        if args.worker_from:
            other = args.worker_from.resolve()
            cpu, doc_a = checkout_replay(path, other, args.lateness, Path(tmp) / "replay-a.json")
            sides.insert(0, Side("A", other, doc_a, args.events / cpu))
            print(f"replay of A ({other}): {args.events / cpu:,.0f} events/s of CPU (one run, a fresh process); "
                  f"how its document differs from B's: {document_differences(doc_a, sides[1].doc)}")
        lines = path.read_bytes().splitlines()
        with EmbeddedBroker(log_path=Path(tmp) / "tansu.log") if not args.broker else _External(args.broker) as running:
            run_workers(args, running.url, path, lines, sides, Path(tmp))
        print(f"load {os.getloadavg()[0]:.2f} at the end")
    return 0


class Side(NamedTuple):
    """One side of a worker A/B: its name, its checkout, its own replay document and that replay's
    events per CPU second."""

    name: str
    checkout: Path
    doc: dict[str, Any]
    replay_rate: float


def run_workers(args: argparse.Namespace, broker: str, path: Path, lines: list[bytes], sides: list[Side],
                tmp: Path) -> None:
    """Each run of `--worker-partitions` and `--scale` with the worker of every side (alternating,
    `--worker-repeat` rounds with `--worker-from`), each checked against its side's replay before its
    speed is printed; with two sides, B / A of the best and of the median events per CPU second."""
    settings = load_settings("dev", broker=broker)
    n = len(lines)
    stores = [s for s in args.stores.split(",") if s]
    topics: dict[int, str] = {}
    runs = [(1, int(p)) for p in args.worker_partitions.split(",") if p]
    runs += [(int(w), int(p)) for w, p in (s.split("x") for s in args.scale.split(",") if s)]
    for _, partitions in runs:
        if partitions not in topics:
            topics[partitions] = f"bench-input-{os.getpid()}-{partitions}"
            produced = asyncio.run(produce(settings.kafka_bootstrap(), topics[partitions], lines, partitions))
            print(f"produce (setup), {partitions} partitions: {n / produced:,.0f} msg/s")
    raw = asyncio.run(raw_consume(settings.kafka_bootstrap(), topics[runs[0][1]], n))
    print(f"raw aiokafka consume: {n / raw:,.0f} msg/s ({raw:.2f} s)")
    single: dict[tuple[str, str, int], float] = {}
    for workers, partitions in runs:
        for store in stores:
            spy = args.py_spy if (workers, partitions) == runs[0] else None  # the first run (of each store) only
            if spy is not None and len(stores) > 1:
                spy = spy.with_name(f"{spy.name}.{store.split(':')[0]}")
            run_sides(args, broker, path, topics[partitions], n, workers, partitions, store, sides, raw, tmp, spy,
                      single)


def run_sides(args: argparse.Namespace, broker: str, path: Path, topic: str, n: int, workers: int, partitions: int,
              store: str, sides: list[Side], raw: float, tmp: Path, spy: Path | None,
              single: dict[tuple[str, str, int], float]) -> None:
    """One worker run per side and round (`single` keeps the 1-worker rates for the scale-out ratio);
    with two sides, the A/B line. Before each one-worker run, the side's replay runs once in a fresh
    process: the worker's ratio to the replay run next to it is less at the mercy of what else the
    machine did at the time than its ratio to the run's best replay."""
    rounds = args.worker_repeat
    label = f"{workers} worker{'s' if workers > 1 else ''} x {partitions} partitions, {store}"
    cpus: dict[str, list[float]] = {side.name: [] for side in sides}
    ratios: dict[str, list[float]] = {side.name: [] for side in sides}
    for round_ in range(rounds):
        for side in sides if round_ % 2 == 0 else sides[::-1]:
            nearby = None
            if workers == 1:
                cpu, doc = checkout_replay(path, side.checkout, args.lateness, tmp / f"nearby-{side.name}.json")
                if doc != side.doc:
                    raise SystemExit(f"the replay of {side.checkout} gave another document this time; no speed printed")
                nearby = n / cpu
            w = bench_workers(broker, topic, n, workers, partitions,
                              tmp / f"w-{workers}x{partitions}-{store.split(':')[0]}-{side.name}{round_}", side.doc,
                              args.lateness, side.checkout, spy, args.bound, store)
            spy = None  # the first run only
            cpus[side.name].append(sum(w["cpu_s"]))
            if nearby is not None:
                ratios[side.name].append(n / sum(w["cpu_s"]) / nearby)
            print_worker_run(f"{label}{f', {side.name}' if len(sides) > 1 else ''}", w, n, partitions, raw, side,
                             single.get((side.name, store, partitions)) if workers > 1 else None, nearby)
            if workers == 1:
                single[(side.name, store, partitions)] = n / w["processing_s"]
    if workers == 1:
        for side in sides:
            got = ratios[side.name]
            print(f"worker / replay run next to it, {label}{f', {side.name}' if len(sides) > 1 else ''}: median "
                  f"{statistics.median(got):.3f} of {len(got)} ({', '.join(f'{r:.3f}' for r in got)}; target >= "
                  f"{0.5 if partitions == 1 else 0.4})")
    if len(sides) > 1:
        a, b = (n / min(cpus[side.name]) for side in sides)
        ma, mb = (n / statistics.median(cpus[side.name]) for side in sides)
        print(f"worker A/B, {label} (events per CPU second, best of {rounds}): A {sides[0].checkout} {a:,.0f}, "
              f"B {sides[1].checkout} {b:,.0f}; B / A {b / a:.3f} (medians {ma:,.0f} and {mb:,.0f}: "
              f"{mb / ma:.3f}){paired(cpus['A'], cpus['B'])}")


def paired(cpu_a: list[float], cpu_b: list[float]) -> str:
    """B / A of events per CPU second round by round (A and B ran next to each other in a round), as a
    geometric mean with twice its standard error; empty for fewer than 2 rounds."""
    logs = [math.log(a / b) for a, b in zip(cpu_a, cpu_b, strict=True)]
    if len(logs) < 2:
        return ""
    mean, half = statistics.fmean(logs), 2 * statistics.stdev(logs) / math.sqrt(len(logs))
    return (f"; round by round B / A {math.exp(mean):.3f} (geometric mean of {len(logs)}, ± 2 standard errors "
            f"{math.exp(mean - half):.3f}-{math.exp(mean + half):.3f})")


def print_worker_run(label: str, w: dict[str, Any], n: int, partitions: int, raw: float, side: Side,
                     base: float | None, nearby: float | None = None) -> None:
    """One worker run's line (its results equal its side's replay by now), and its ratio: to the
    replay for one worker (the run's best, and `nearby`: the one run just before), to one worker's
    wall clock (`base`) for several."""
    wall = n / w["processing_s"]
    cpu = sum(w["cpu_s"])
    workers = len(w["cpu_s"])
    print(f"{label}: results equal the replay's; {wall:,.0f} events/s ({w['processing_s']:.2f} s processing, "
          f"{w['wall_s']:.2f} s from start); CPU {' + '.join(f'{c:.2f}' for c in w['cpu_s'])} s "
          f"(system {w['system_s']:.2f} s) = "
          f"{n / cpu:,.0f} events per CPU second; peak RSS {' / '.join(f'{r:.0f}' for r in w['rss_mb'])} MB; "
          f"{w['changelog_writes'] / n:.2f} changelog records per event; batches "
          f"{', '.join(f'{stage} {count:g}' for stage, count in w['batches'].items())}")
    if workers == 1:
        beside = "" if nearby is None else (f"; {n / cpu / nearby:.3f} to the replay run just before it "
                                            f"({nearby:,.0f} events per CPU second)")
        print(f"  worker / replay: {n / cpu / side.replay_rate:.3f} by CPU time (target >= "
              f"{0.5 if partitions == 1 else 0.4}){beside}, worker / raw consume {raw / w['processing_s']:.3f}")
    else:
        ratio = f"{wall / base:.2f}" if base else "n/a (no 1-worker run on as many partitions)"
        print(f"  per worker {wall / workers:,.0f} events/s; {workers} workers / 1 worker: {ratio}")


class _External:
    def __init__(self, url: str) -> None:
        self.url = url

    def __enter__(self) -> _External:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


if __name__ == "__main__":
    sys.exit(main())
