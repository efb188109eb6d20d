"""Path globs as GitLab reads `include:local` wildcards, and as `.sunset.yml` uses them (`exclude:`,
`kinds:`): `*` within one folder, `**` (any run of two or more stars) across folders.

Matching takes linear time in the number of folders the path has, for each literal piece of the
pattern: a pattern with one run of stars is a regular expression (one backtracking point at most);
with more, the positions the stars can reach are kept as a few intervals and each literal piece is
looked for with `str.find`, keeping per folder only the earliest end (every later one reaches less).
A regular expression would backtrack without end on `**a**a**a…b.yml`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from scanner.core.files import Skipped, walk

_STARS = re.compile(r"(\*+)")


class Glob:
    __slots__ = ("literals", "stars", "regex")

    def __init__(self, pattern: str) -> None:
        parts = _STARS.split(pattern.lstrip("/"))
        self.literals: tuple[str, ...] = tuple(parts[0::2])
        self.stars: tuple[bool, ...] = tuple(len(s) > 1 for s in parts[1::2])  # True: `**`, across folders
        self.regex: re.Pattern[str] | None = None
        if len(self.stars) <= 1:
            pieces = [re.escape(self.literals[0])]
            if self.stars:
                pieces += [".*" if self.stars[0] else "[^/]*", re.escape(self.literals[1])]
            self.regex = re.compile("".join(pieces) + r"\Z", re.S)

    def match(self, path: str) -> bool:
        if self.regex is not None:
            return self.regex.match(path) is not None
        first = self.literals[0]
        if not path.startswith(first):
            return False
        points = [len(first)]
        for i, across in enumerate(self.stars):
            spans = _spread(path, points, across)
            if i + 1 == len(self.stars):
                return _ends(path, spans, self.literals[-1])
            points = _find(path, spans, self.literals[i + 1], self.stars[i + 1])
            if not points:
                return False
        return False  # not reached: a pattern with stars returns in the loop


def _next_slash(path: str, at: int) -> int:
    slash = path.find("/", at)
    return len(path) if slash < 0 else slash


def _spread(path: str, points: list[int], across: bool) -> list[tuple[int, int]]:
    """Where a star can end, from each point: sorted, disjoint intervals of positions (both ends in)."""
    if across:
        return [(points[0], len(path))]
    spans: list[tuple[int, int]] = []
    for p in points:
        end = _next_slash(path, p)
        if spans and p <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(spans[-1][1], end))
        else:
            spans.append((p, end))
    return spans


def _find(path: str, spans: list[tuple[int, int]], literal: str, across_next: bool) -> list[int]:
    """Ends of `literal` starting inside the spans, ascending; per folder only the earliest end, and
    only the very first when the next star crosses folders."""
    points: list[int] = []
    size = len(literal)
    for lo, hi in spans:
        at = path.find(literal, lo, hi + size)
        while at >= 0:
            end = at + size
            if points and _next_slash(path, points[-1]) >= end:
                pass  # an earlier end in the same folder reaches everything this one does
            else:
                points.append(end)
            if across_next:
                return points
            at = path.find(literal, max(at + 1, _next_slash(path, end) + 1 - size), hi + size)
    return points


def _ends(path: str, spans: list[tuple[int, int]], literal: str) -> bool:
    start = len(path) - len(literal)
    return path.endswith(literal) and any(lo <= start <= hi for lo, hi in spans)


Named = tuple[str, "Path | Skipped"]  # a file and its path from the repository root, as a glob reads it


def yaml_files(repo: Path) -> list[Named]:
    """The YAML files of a repository (what cannot be read as `Skipped`), walked once, each with its
    path from the repository root worked out once for every pattern tried on it."""
    named = []
    for p in walk(repo, lambda _, name: name == ".git"):
        path = p.path if isinstance(p, Skipped) else p
        if path.name.endswith((".yml", ".yaml")):
            named.append((path.relative_to(repo).as_posix(), p))
    return named


def glob_files(repo: Path, pattern: str, files: list[Named] | None = None) -> list[Path | Skipped]:
    """The YAML files of a repository (`files`, walked by `yaml_files`) an `include:local` pattern names."""
    glob = Glob(pattern)
    return [p for name, p in (yaml_files(repo) if files is None else files) if glob.match(name)]


def gitignore(patterns: tuple[str, ...]) -> Any:
    """`exclude:` patterns with gitignore's meaning (`scripts/`, `scripts`, `*.sh`, `deploy.sh` at any
    depth, `/top.yml` from the base, `!keep.yml`), as pathspec reads them; imported only when a scan
    excludes something."""
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines(patterns)
