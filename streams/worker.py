"""`sunset stream worker`: run the Faust app until stopped; exit 1 if it crashed.

SIGTERM and SIGINT stop it within `SUNSET_STOP_GRACE` seconds (4): Faust's orderly shutdown first;
if that does not finish (a broker that is down keeps its clients retrying for a minute or more),
the process exits anyway. That is safe: the state is exact after a crash (source coordinates,
streams.handlers), and a SIGKILL is the same stop without the grace.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from typing import Any

import faust

from streams.app import create_app
from streams.logs import limit_repeats
from streams.settings import StreamSettings


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
    code: int | str | None = 0
    try:
        worker.execute_from_commandline()
    except SystemExit as exc:
        code = exc.code
    if app.crashed:
        return 1
    return code if isinstance(code, int) else 1
