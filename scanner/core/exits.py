"""Exit codes and the one error that means "sunset could not run" — importable without side effects.

One table for every command (`scan`, `fix`, `comment`, `policies`, `stream`):

0  clean: nothing at or above `--fail-on` and no input errors (or `--fail-on never`, or `--exit-zero`);
   `fix` applied everything it tried; `fix --diff` has nothing to change.
1  findings at or above `--fail-on`, or input errors (they count as `error`); `fix --diff` printed a
   change; `fix` refused or could not write a fix; `policies docs --check` found stale pages.
2  sunset could not run: bad arguments, a bad policy or configuration file, an output file that
   cannot be written, a `comment` that could not be posted.
"""

import os
import traceback

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Something the user must fix before sunset can run (exit 2)."""


def unforeseen_os_error(exc: OSError) -> str:
    """An operating-system error no check foresaw (a file or folder sunset could not use), in one line."""
    names = " → ".join(str(n) for n in (exc.filename, exc.filename2) if n is not None)
    reason = exc.strerror or str(exc)
    return f"{names}: {reason}" if names else reason


def unforeseen_error(exc: BaseException) -> str:
    """An exception sunset did not expect (a bug), in one line: its type, its message and the place in
    sunset's code it came from, instead of a traceback."""
    frames = traceback.extract_tb(exc.__traceback__)
    place = next((f"{os.path.basename(f.filename)}:{f.lineno}" for f in reversed(frames)
                  if f"{os.sep}scanner{os.sep}" in f.filename or f"{os.sep}streams{os.sep}" in f.filename), "")
    where = f" (at {place})" if place else ""
    return f"internal error (a bug in sunset; please report it): {type(exc).__name__}: {exc}{where}"
