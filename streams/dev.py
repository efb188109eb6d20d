"""`sunset stream dev`: the embedded broker, a worker and a receiver on 127.0.0.1, no Kafka needed.

The worker and the receiver run as child processes of this one, with the dev profile; Ctrl-C
or SIGTERM stops all three (the broker keeps everything in memory, so each run starts empty).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from streams.broker import EmbeddedBroker
from streams.publish import publish_files
from streams.settings import load_settings


def _spawn(args: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "scanner.cli", "stream", *args], env=env)


def wait_http(url: str, timeout: float = 60.0, process: subprocess.Popen[bytes] | None = None) -> None:
    """Wait until `url` answers 200 (raise RuntimeError after `timeout`, or if `process` exits)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"{process.args!r} exited with {process.returncode}")
        with contextlib.suppress(OSError), urllib.request.urlopen(url, timeout=1) as response:
            if response.status == 200:
                return
        time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer within {timeout:g}s")


def taken_ports(ports: list[int]) -> list[int]:
    """Those of `ports` that another process listens on (0: any free port, never taken)."""
    taken = []
    for port in ports:
        if not port:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                taken.append(port)
    return taken


def _stop_on_sigterm(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # the same clean stop as Ctrl-C: children, then the broker


def run_dev(port: int, web_port: int, broker_port: int, load: Path | None) -> int:
    """Run until Ctrl-C or SIGTERM; 2 if a port is taken (another server would answer for us)."""
    taken = taken_ports([port, web_port, broker_port])
    if taken:
        print(f"sunset stream dev: port {', '.join(map(str, taken))} on 127.0.0.1 is in use", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    token = os.environ.get("SUNSET_TOKEN") or secrets.token_urlsafe(24)
    with tempfile.TemporaryDirectory(prefix="sunset-dev-") as tmp, EmbeddedBroker(broker_port) as broker:
        env = {**os.environ, "SUNSET_BROKER": broker.url, "SUNSET_PROFILE": "dev", "SUNSET_TOKEN": token}
        children: list[subprocess.Popen[bytes]] = []
        try:
            if load is not None:  # before the worker starts: every input partition has its events
                sent = publish_files(load_settings("dev", broker=broker.url), load, None)
                print(f"published {sent} lines of {load}")
            worker = _spawn(["worker", "--web-port", str(web_port), "--data-dir", f"{tmp}/worker"], env)
            children.append(worker)
            receiver = _spawn(["receive", "--port", str(port)], env)
            children.append(receiver)
            wait_http(f"http://127.0.0.1:{web_port}/ready", process=worker)  # tables recovered, not just up
            wait_http(f"http://127.0.0.1:{port}/health", process=receiver)
            print(_banner(broker.url, port, web_port, token), flush=True)
            while all(child.poll() is None for child in children):
                time.sleep(0.5)
            return 1  # a child died on its own
        except KeyboardInterrupt:
            return 0
        finally:
            for child in children:
                if child.poll() is None:
                    child.terminate()
            for child in children:
                try:
                    child.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    child.kill()
                    child.wait()


def _banner(broker: str, port: int, web_port: int, token: str) -> str:
    return f"""
sunset stream dev — broker {broker} (Tansu, memory only)
  receiver  POST http://127.0.0.1:{port}/audit-events   token: {token}
  views     http://127.0.0.1:{web_port}/tallies  /findings  /health  /metrics
  try:      curl -H 'X-Gitlab-Event-Streaming-Token: {token}' --data @event.json http://127.0.0.1:{port}/audit-events
Ctrl-C (or SIGTERM) stops everything."""
