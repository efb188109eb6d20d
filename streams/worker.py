"""`sunset stream worker`: run the Faust app until stopped; exit 1 if it crashed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import faust

from streams.app import create_app
from streams.settings import StreamSettings


def run_worker(settings: StreamSettings, loglevel: str = "warning",
               extend: Callable[[faust.App], Any] | None = None) -> int:
    """Blocks until SIGINT/SIGTERM (exit 0) or a crash (exit 1, so a supervisor restarts it).
    `extend` adds work to the app before it starts (`sunset instance worker`: the instance scan)."""
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    app = create_app(settings)
    if extend is not None:
        extend(app)
    worker = faust.Worker(app, loglevel=loglevel, quiet=True, redirect_stdouts=False)
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
