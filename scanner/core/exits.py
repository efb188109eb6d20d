"""Exit codes and the one error that means "sunset could not run" — importable without side effects.

One table for every command (`scan`, `fix`, `comment`, `policies`, `stream`):

0  clean: nothing at or above `--fail-on` and no input errors (or `--fail-on never`, or `--exit-zero`);
   `fix` applied everything it tried; `fix --diff` has nothing to change.
1  findings at or above `--fail-on`, or input errors (they count as `error`); `fix --diff` printed a
   change; `fix` refused or could not write a fix; `policies docs --check` found stale pages.
2  sunset could not run: bad arguments, a bad policy or configuration file, an output file that
   cannot be written, a `comment` that could not be posted.
"""

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Something the user must fix before sunset can run (exit 2)."""
