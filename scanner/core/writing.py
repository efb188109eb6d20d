"""Writing a file sunset was asked to write (a report, a baseline): one function, one line of reason.

A FIFO nobody reads and a folder are refused at once, never waited on; a missing folder is named.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from scanner.core.files import os_problem


def write_file(path: Path, text: str) -> str | None:
    """Write `text` to `path` (created or truncated); None, or why it could not be written, in a
    few words. A FIFO nobody reads and a folder are refused at once, never waited on."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0), 0o666)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            return "a FIFO with no reader"
        if exc.errno == errno.ENOENT and not os.path.isdir(os.path.dirname(os.path.abspath(path))):
            return f"the folder {os.path.dirname(os.path.abspath(path))} does not exist"
        return "a folder" if exc.errno == errno.EISDIR else os_problem(exc)
    except ValueError:
        return "not a file name"
    try:
        os.set_blocking(fd, True)
        with open(fd, "w", encoding="utf-8", closefd=True) as fh:
            fh.write(text)
    except OSError as exc:
        return os_problem(exc)
    return None
