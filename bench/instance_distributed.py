"""Bench (by hand) of the distributed instance scan: the stand-in group of bench/instance.py (its own
process, a fixed latency per request), the embedded Tansu broker, W `sunset instance worker`
subprocesses, one `sunset instance publish`; the time from publishing to a row for every project (read
from the workers' `/instance-findings` views). Prints projects/s and each worker's peak RSS.

    .venv/bin/python bench/instance_distributed.py --projects 300 --workers 1
    .venv/bin/python bench/instance_distributed.py --projects 300 --workers 2 --partitions 4
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))

from instance import serve  # noqa: E402 - the stand-in group of the one-machine bench

from streams.dev import EmbeddedBroker, free_port  # noqa: E402

APP = "sunset-bench-distributed"


def rows(port: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/instance-findings", timeout=30) as response:
            return len(json.loads(response.read()))
    except OSError:
        return -1


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--projects", type=int, default=300)
    ap.add_argument("--templates", type=int, default=5)
    ap.add_argument("--latency", type=float, default=0.02)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--partitions", type=int, default=4)
    args = ap.parse_args()
    from gitlab_standin import TOKEN

    queue: multiprocessing.Queue = multiprocessing.Queue()  # type: ignore[type-arg]
    server = multiprocessing.Process(target=serve, args=(args.projects, args.templates, args.latency, queue),
                                     daemon=True)
    server.start()
    gitlab = queue.get(timeout=120)
    with tempfile.TemporaryDirectory() as tmp:
        broker = EmbeddedBroker(log_path=Path(tmp) / "tansu.log").start()
        env = {**os.environ, "SUNSET_GITLAB_TOKEN": TOKEN, "SUNSET_APP_ID": APP, "SUNSET_BROKER": broker.url,
               "SUNSET_INPUT_TOPIC": f"{APP}-in", "SUNSET_FINDINGS_TOPIC": f"{APP}-findings",
               "SUNSET_DEAD_LETTER_TOPIC": f"{APP}-dead", "SUNSET_PARTITIONS": str(args.partitions)}
        ports = [free_port() for _ in range(args.workers)]
        workers = [subprocess.Popen(
            [sys.executable, "-m", "scanner.cli", "instance", "worker", "--gitlab", gitlab, "--profile", "dev",
             "--web-port", str(port), "--data-dir", f"{tmp}/w{port}", "--cache-dir", f"{tmp}/cache{port}"],
            env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for port in ports]
        try:
            while any(rows(p) < 0 for p in ports):
                time.sleep(0.5)
            time.sleep(5)  # let the group settle (every worker assigned) before the clock starts
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "scanner.cli", "instance", "publish", "--gitlab", gitlab,
                            "--group", "bench", "--profile", "dev"], env=env, cwd=ROOT, check=True)
            total = args.projects + args.templates + 1  # the template projects and the component project too
            while sum(max(rows(p), 0) for p in ports) < total:
                time.sleep(0.5)
            seconds = time.perf_counter() - start
            rss = [peak_rss_mib(w.pid) for w in workers]
        finally:
            for w in workers:
                w.terminate()
                w.wait(timeout=60)
            broker.stop()
    server.terminate()
    print(f"# {os.cpu_count()} CPU, load {os.getloadavg()[0]:.2f}; {args.projects} projects, {args.latency * 1000:.0f}"
          f" ms per request, {args.workers} worker(s), {args.partitions} partitions")
    print(f"{total} projects in {seconds:.1f} s (publish included) = {total / seconds:.1f} projects/s;"
          f" peak RSS per worker {', '.join(f'{r:.0f}' for r in rss)} MiB")


if __name__ == "__main__":
    main()
