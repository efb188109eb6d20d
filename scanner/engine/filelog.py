"""What became of each file a scan met, for `sunset scan --show-files`: read as which kind and why (a
pipeline root, included by `file:line`, named on the command line, a custom CI/CD configuration file),
or skipped and why (no GitLab file kind fits it, an `exclude` pattern, unreadable, a folder never
entered). The scan tells it as it goes (`scanner.engine.scan.Scan.log`), so the list is what the scan
did. Without a listener every method returns at once: a plain scan pays nothing for it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from scanner.core.files import printable, relative
from scanner.engine.globs import gitignore

READ, SKIPPED = "read", "skipped"


@dataclass(slots=True)
class FileLog:
    tell: Callable[[str, str, str], None] | None  # (path as shown, READ or SKIPPED, the kind and why, or why not)
    shown: Callable[[Path], str]
    exclude: tuple[str, ...] = ()
    exclude_base: Path = Path()
    reasons: dict[Path, str] = field(default_factory=dict)  # real path → why it is read

    def why(self, path: Path, reason: str) -> None:
        """Why a file is about to be read; the first reason given wins (a root before its includes)."""
        if self.tell is not None and reason:
            self.reasons.setdefault(path.resolve(), reason)

    def read(self, where: Path | str, path: Path, kind: str) -> None:
        if self.tell is not None:
            why = self.reasons.pop(path.resolve(), "")
            self.tell(self._shown(where), READ, kind + (f": {why}" if why else ""))

    def skipped(self, path: Path | str, why: str) -> None:
        if self.tell is not None:
            self.tell(self._shown(path), SKIPPED, why)

    def folder(self, folder: str, why: str) -> None:
        if self.tell is not None:
            self.tell(self.shown(Path(folder)) + "/", SKIPPED, why)

    def unrecognised(self, path: Path, excluded: Callable[[Path], bool]) -> None:
        """A walked file no kind claims: said to be excluded when an `exclude` pattern also names it."""
        if self.tell is not None:
            self.excluded(path) if excluded(path) else self.skipped(path, "no GitLab file kind fits it")

    def excluded(self, path: Path) -> None:
        """Left out by `exclude`: the last pattern that matches it is named."""
        if self.tell is not None:
            rel = relative(path, self.exclude_base)
            hits = [p for p in self.exclude if not p.startswith("!") and gitignore((p,)).match_file(rel)]
            self.skipped(path, f"excluded by `{hits[-1]}`" if hits else "excluded")

    def _shown(self, path: Path | str) -> str:
        return printable(path) if isinstance(path, str) else self.shown(path)
