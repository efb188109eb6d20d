"""One log line per interval for a repeating problem (a broker that is down logs the same
connection error hundreds of times a second through aiokafka and Faust)."""

from __future__ import annotations

import logging
import time

INTERVAL = 10.0  # seconds between two records of the same kind


class OncePerInterval(logging.Filter):
    """Pass the first record of each (logger, level, message template) per `interval`; the next
    one that passes says how many were held back meanwhile."""

    def __init__(self, interval: float = INTERVAL) -> None:
        super().__init__()
        self.interval = interval
        self.last: dict[tuple[str, int, str], tuple[float, int]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        key = (record.name, record.levelno, str(record.msg)[:200])
        now = time.monotonic()
        since, held = self.last.get(key, (float("-inf"), 0))
        if now - since < self.interval:
            self.last[key] = (since, held + 1)
            return False
        self.last[key] = (now, 0)
        if held:
            record.msg = f"{record.msg} ({held} more like this in the last {now - since:.0f} s)"
        return True


def limit_repeats(logger: logging.Logger, interval: float = INTERVAL) -> None:
    """Install the filter on every handler of `logger` (the root logger, once it is set up)."""
    for handler in logger.handlers:
        if not any(isinstance(f, OncePerInterval) for f in handler.filters):
            handler.addFilter(OncePerInterval(interval))
