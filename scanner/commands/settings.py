"""`sunset scan --show-settings`: the configuration one scan resolves, each value with where it came from
(a flag, the configuration file and line, or the default). `scanner.commands.scan.plan` resolves every
value through `Sources.pick`, so what is shown is what the scan uses.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from scanner.engine.config import LoadedConfig

T = TypeVar("T")
U = TypeVar("U")
DEFAULT = "default"


def shown_path(path: Path) -> str:
    """A path from the working directory when it is below it, else absolute."""
    absolute = os.path.abspath(path)
    here = os.getcwd()
    return os.path.relpath(absolute, here) if absolute.startswith(here + os.sep) else absolute


@dataclass(slots=True)
class Sources:
    """Each setting as resolved, in order: (name, value as shown, where it came from)."""

    loaded: LoadedConfig | None = None
    rows: list[tuple[str, str, str]] = field(default_factory=list)

    def where(self, *route: str | int) -> str:
        assert self.loaded is not None
        return f"{shown_path(self.loaded.path)}:{self.loaded.line_of(*route)}"

    def pick(self, name: str, flag_value: T | None, flag: str, file_value: T | None, default: Callable[[], U],
             default_note: str = DEFAULT, show: Callable[[T | U], str] = str,
             route: tuple[str, ...] = ()) -> T | U:
        """The flag's value when given, else the file's when set (at `route`, by default the name), else the
        default; the row records which."""
        value: T | U
        if flag_value is not None:
            value, origin = flag_value, flag
        elif file_value is not None and self.loaded is not None:
            value, origin = file_value, self.where(*(route or (name,)))
        else:
            value, origin = default(), default_note
        self.add(name, show(value), origin)
        return value

    def add(self, name: str, value: str, origin: str) -> None:
        self.rows.append((name, value, origin))


def listed(values: object) -> str:
    """A tuple, list or mapping as one short line; empty as `none`."""
    if isinstance(values, dict):
        return ", ".join(f"{k}: {v}" for k, v in values.items()) or "none"
    if isinstance(values, (list, tuple)):
        return ", ".join(str(v) for v in values) or "none"
    return str(values)


def render(sources: Sources, command: str = "scan") -> str:
    """One line per setting: name, value, and where it came from; a value that holds a credential (a
    token in a URL, a key in a pattern) is masked, and control characters are shown as escapes."""
    from scanner.core.redact import redact_error, visible

    rows = [(name, visible(redact_error(value)), visible(origin)) for name, value, origin in sources.rows]
    name_w = max(len(n) for n, _, _ in rows)
    value_w = min(48, max(len(v) for _, v, _ in rows))
    lines = [f"sunset {command} settings (a flag wins over the configuration file, the file over the default):", ""]
    for name, value, origin in rows:
        lines.append(f"{name:<{name_w}}  {value:<{value_w}}  ({origin})")
    return "\n".join(lines) + "\n"

