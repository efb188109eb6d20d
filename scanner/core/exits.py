"""Exit codes and the one error that means "sunset could not run" — importable without side effects.

0: nothing at or above `--fail-on` and no input errors; 1: findings at or above the threshold,
or input errors; 2: sunset could not run (bad arguments, a bad policy or configuration file).
"""

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Something the user must fix before sunset can run (exit 2)."""
