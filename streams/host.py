"""What the program running `sunset stream …` lends the commands.

`streams` does not import `scanner` (the layering of docs/architecture.md), yet a stream command's
error line is masked and its output file written exactly as `sunset scan`'s are: `scanner.cli`,
which registers the stream commands, hands them its own redactor and file writer. One masking and
one writing implementation serve every command.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Host:
    """`redact(message, prose)`: the message (it may quote a file name, a URL, a value the user gave)
    with every secret masked; `prose` when sunset wrote the sentence around the values, so its own
    `token: --token-file FILE` shapes stay. Every line a stream command writes to stderr goes through
    it. `write_file(path, text)`: write a file the user named; None, or why it could not be written
    in a few words (a missing folder, a FIFO with no reader, a folder), never waiting on a FIFO."""

    redact: Callable[[str, bool], str]
    write_file: Callable[[Path, str], str | None]
