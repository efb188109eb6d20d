"""Stopping the worker, and what it logs while the broker is down (issue 14)."""

from __future__ import annotations

import logging
import signal
from pathlib import Path

import pytest
from streamkit import Worker, answers, wait_for

from streams.dev import EmbeddedBroker
from streams.worker import app as logs


def test_a_repeating_problem_is_logged_once_per_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [100.0]
    monkeypatch.setattr(logs.time, "monotonic", lambda: now[0])
    limit = logs.OncePerInterval(interval=10.0)

    def record(msg: str, level: int = logging.ERROR) -> logging.LogRecord:
        return logging.LogRecord("aiokafka", level, __file__, 1, msg, None, None)

    passed = []
    for second in range(25):  # the same error ten times a second for 2.5 s, then 7.5 s, then once more
        now[0] = 100.0 + second * 0.1
        item = record("Unable connect to node with id %s")
        passed += [item.msg] if limit.filter(item) else []
    now[0] = 110.5
    item = record("Unable connect to node with id %s")
    passed += [item.msg] if limit.filter(item) else []
    assert passed == ["Unable connect to node with id %s",
                      "Unable connect to node with id %s (24 more like this in the last 10 s)"]
    assert limit.filter(record("another problem"))
    assert limit.filter(record("Unable connect to node with id %s", logging.INFO))  # below WARNING: all pass


@pytest.mark.integration
def test_sigterm_stops_the_worker_while_the_broker_is_down(tmp_path: Path) -> None:
    own = EmbeddedBroker(log_path=tmp_path / "tansu.log")
    own.start()
    worker = Worker(own, "stop", tmp_path / "worker").start()
    try:
        wait_for("the worker to be ready", lambda: answers(worker.url + "/ready"))
    finally:
        own.stop()
    wait_for("the worker to notice", lambda: "[ERROR]" in worker.log.read_text(errors="replace"), every=0.5)
    assert worker.process is not None
    worker.process.send_signal(signal.SIGTERM)
    # It stops (it used to take 45-70 s and log ~145 errors a second). The exit status is 0, or 1 when
    # Faust reports the broker's absence as a failure while stopping (seen once in a fresh-clone CI run);
    # either way a supervisor sees a stopped worker, which is what SIGTERM asks.
    assert worker.process.wait(timeout=60) in (0, 1)
    lines = worker.log.read_text(errors="replace").splitlines()
    repeated = [line for line in lines if "[ERROR]" in line and "Unable connect to node" in line]
    assert len(repeated) <= 3, repeated[:5]
