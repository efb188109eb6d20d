"""`sunset scan -`: standard input read once, as bytes, bounded, and named by `--stdin-filename`.

Binary input is refused after its first 8 KB (`sunset scan - < /dev/zero` with a raised
`--max-file-size` reads no more); the name must be one a file could have (it says the kind).
"""

from __future__ import annotations

import argparse
import sys

from scanner.core.exits import UsageError
from scanner.core.files import ReadProblem, decode_text, shorten
from scanner.engine.scan import StdinFile


def stdin_file(args: argparse.Namespace) -> StdinFile | None:
    """`sunset scan -`: standard input read once, as bytes (decoded as files are: `scanner.core.files`)."""
    name = getattr(args, "stdin_filename", None)
    if args.paths.count("-") > 1:
        raise UsageError("`-` (standard input) can be given once")
    if "-" not in args.paths:
        if name is not None:
            raise UsageError("--stdin-filename names standard input: give `-` among the paths")
        return None
    if name is not None:
        _check_stdin_name(name)
    head = sys.stdin.buffer.read(8192)
    if b"\0" in head:  # binary (`sunset scan - < /dev/zero`): refused without reading the rest
        return StdinFile(decode_text(head), name)
    raw = head + sys.stdin.buffer.read(max(0, args.max_file_size + 1 - len(head)))
    if len(raw) > args.max_file_size:
        return StdinFile(ReadProblem(f"standard input is over the {args.max_file_size}-byte limit; not scanned"), name)
    return StdinFile(decode_text(raw), name)


def _check_stdin_name(name: str) -> None:
    """A name a file could have: a last part, each part within the system's limit on a file name."""
    parts = [p for p in name.replace("\\", "/").split("/") if p not in ("", ".")]
    if not parts or name.endswith("/") or parts[-1] == "..":
        raise UsageError(f"--stdin-filename {shorten(name)}: give a file name (it says the kind of the file)")
    if any(len(p.encode("utf-8", "surrogateescape")) > 255 for p in parts) or "\0" in name:
        raise UsageError(f"--stdin-filename {shorten(name)}: not a file name this system could have")
