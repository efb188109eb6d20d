"""Where sunset's configuration is: `--config FILE`, else `.sunset.yml` or a `pyproject.toml` holding a
`tool.sunset` table, from the working directory up to the repository root, else from the scanned
folder up. Light to import (no pydantic): every scan runs it, and most find nothing.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from scanner.core.files import MAX_FILE_BYTES, ReadProblem, read_settings_text

CONFIG_NAME = ".sunset.yml"


def find_config(explicit: str | None, base: Path) -> Path | None:
    """`--config FILE`; else `.sunset.yml`, or a `pyproject.toml` with a `tool.sunset` table, in the
    working directory or a parent up to the repository root (the first folder holding `.git`); else the
    same from the scanned folder."""
    if explicit:
        return Path(explicit)
    for start in (Path.cwd(), base):
        folders = config_folders(start)
        for folder in folders:
            for name in (CONFIG_NAME, "pyproject.toml"):
                _inside(folder / name, folders[-1])
            if (folder / CONFIG_NAME).is_file():
                return folder / CONFIG_NAME
            if has_tool_table(folder / "pyproject.toml"):
                return folder / "pyproject.toml"
    return None


class OutsideRepository(Exception):
    """A configuration file found in the tree that is a link to a file outside its repository."""


def _inside(path: Path, root: Path) -> None:
    """A configuration file found in a repository is read only from inside it: a tree's own files must
    not make sunset read (or apply) a file elsewhere on the machine."""
    if not path.is_symlink():
        return
    target = path.resolve()
    if not target.is_relative_to(root.resolve()):
        raise OutsideRepository(f"{path}: a link to a file outside the repository ({target}); sunset reads no "
                                "configuration from outside the tree it found it in (name a file with --config "
                                "to use one)")


def config_folders(start: Path) -> list[Path]:
    """`start` and its parents up to the repository root (the first holding `.git`) or the top."""
    folder = Path(os.path.abspath(start))
    folders = [folder]
    while not (folder / ".git").exists() and folder.parent != folder:
        folder = folder.parent
        folders.append(folder)
    return folders


def has_tool_table(path: Path) -> bool:
    """A `pyproject.toml` whose TOML holds `tool.sunset` (a `[tool.sunset]` header, only subtables such
    as `[tool.sunset.policies]`, or dotted keys). One that is not valid TOML counts when it mentions
    `sunset`, so that loading it reports its error instead of sunset ignoring it."""
    import tomllib

    if not path.is_file():
        return False
    text = read_settings_text(path)
    if isinstance(text, ReadProblem):  # loading it says what is wrong, if it is meant for sunset
        try:
            with path.open("rb") as raw:
                return b"sunset" in raw.read(MAX_FILE_BYTES)
        except OSError:
            return False
    try:
        tool = tomllib.loads(text).get("tool")
    except (tomllib.TOMLDecodeError, RecursionError, ValueError):  # invalid, nested too deeply, a huge integer
        return "sunset" in text
    return isinstance(tool, dict) and "sunset" in tool


_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")
_KEY = re.compile(r"^\s*((?:[A-Za-z0-9_-]+|\"[^\"]*\"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|\"[^\"]*\"|'[^']*'))*)\s*=")


def _dotted(text: str) -> tuple[str, ...]:
    return tuple(part.strip().strip("\"'") for part in re.findall(r"\"[^\"]*\"|'[^']*'|[^.]+", text))


def toml_key_lines(text: str, table: tuple[str, ...]) -> dict[tuple[str, ...], int]:
    """The line of each key (and subtable header) below `table`, as routes relative to it: enough to
    name the line of a problem (the values themselves come from `tomllib`). What is inside strings,
    multi-line arrays and inline tables, and comments, is passed over."""
    found: dict[tuple[str, ...], int] = {}
    current: tuple[str, ...] = ()
    state = _Lexer()
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.removesuffix("\r")
        if not state.quote and state.depth == 0:
            if m := _HEADER.match(line):
                current = _dotted(m.group(1))
                if current[: len(table)] == table and len(current) > len(table):
                    found.setdefault(current[len(table):], number)
                continue
            if m := _KEY.match(line):
                route = current + _dotted(m.group(1))
                if route[: len(table)] == table and len(route) > len(table):
                    for cut in range(len(table) + 1, len(route) + 1):
                        found.setdefault(route[len(table):cut], number)
                line = line[m.end():]
        state.feed(line)
    return found


class _Lexer:
    """Where a TOML value that spans lines stands: inside which string, how many brackets deep."""

    def __init__(self) -> None:
        self.quote = ""  # the open string's delimiter: ", ', \"\"\" or \'\'\'
        self.depth = 0

    def feed(self, line: str) -> None:
        i = 0
        while i < len(line):
            if self.quote:
                if line.startswith(self.quote, i):
                    i += len(self.quote)
                    self.quote = ""
                    continue
                i += 2 if line[i] == "\\" and self.quote in ('"', '"""') else 1
                continue
            ch = line[i]
            if ch == "#":
                break
            if ch in "\"'":
                self.quote = ch * 3 if line.startswith(ch * 3, i) else ch
                i += len(self.quote)
                continue
            self.depth = max(0, self.depth + (ch in "[{") - (ch in "]}"))
            i += 1
        if self.quote in ('"', "'"):  # a one-line string never spans lines
            self.quote = ""
