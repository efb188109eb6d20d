"""Where `sunset scan` writes its report: stdout and every `--output`, one run, several formats.

`-o FILE` writes `--format` to FILE instead of stdout (as before); `-o FORMAT=FILE` (repeatable) writes
FORMAT to FILE as well, and stdout keeps `--format` — so one run writes JSON for the merge-request
comment, Code Quality for the widget and SARIF, and the job log still shows the text report.
`--quiet` leaves stdout empty; the files are still written. Each format is rendered once.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from scanner.core.exits import UsageError
from scanner.core.writing import write_file
from scanner.report.formats import FORMATS

STDOUT = "-"
_FORMATISH = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")


@dataclass(frozen=True, slots=True)
class Output:
    format: str
    path: str  # STDOUT or a file


def outputs(
    values: Sequence[str] | None, default_format: str, quiet: bool, statistics: bool = False
) -> tuple[Output, ...]:
    """The `--output` values read: `FORMAT=FILE` or `FILE`; a bad one is a usage error (exit 2).
    `--statistics` puts the per-policy counts on stdout in place of `--format`."""
    files: list[Output] = []
    to_stdout = not quiet
    for value in values or ():
        name, sep, path = value.partition("=")
        if sep and name in FORMATS:
            files.append(Output(name, _file(value, path)))
        elif sep and _FORMATISH.fullmatch(name) and "/" not in name:
            raise UsageError(f"--output {value}: unknown format {name!r} (one of: {', '.join(FORMATS)}); "
                             f"a file whose name holds '=' can be written ./{value}")
        else:
            files.append(Output(default_format, _file(value, value)))
            to_stdout = False  # `-o FILE` takes stdout's place, as it always did
    shown = "statistics" if statistics else default_format
    return ((Output(shown, STDOUT),) if to_stdout else ()) + tuple(files)


def _file(value: str, path: str) -> str:
    if not path or path == STDOUT:
        raise UsageError(f"--output {value}: give a file name (stdout receives --format unless --quiet)")
    return path


Render = Callable[[str, bool], str]  # (format, to stdout) -> text; colour only ever goes to stdout


def write(targets: Sequence[Output], render: Render, stdout: Callable[[str], object]) -> list[str]:
    """Render each format once per kind of destination and write it everywhere it goes. Returns one
    line per output that could not be written; the other outputs are still written."""
    rendered: dict[tuple[str, bool], str] = {}
    problems: list[str] = []
    for target in targets:
        key = (target.format, target.path == STDOUT)
        if key not in rendered:
            rendered[key] = render(*key)
        if target.path == STDOUT:
            stdout(rendered[key])
            continue
        reason = write_file(Path(target.path), rendered[key])
        if reason is not None:
            from scanner.core.redact import redact_error  # a file name may hold a secret

            problems.append(redact_error(f"cannot write {target.format} report to {target.path}: {reason}"))
    return problems

