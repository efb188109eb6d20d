"""What one scan is asked to do: the options, custom CI/CD configuration files, and the plan a
command builds from flags and `.sunset.yml` (`scanner.commands.scan`). Imported through
`scanner.engine.scan` as well."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from scanner.core.files import MAX_FILE_BYTES, ReadProblem, relative
from scanner.core.versions import Version
from scanner.rules.policy import Policy


@dataclass(frozen=True, slots=True)
class ScanOptions:
    target: Version
    current: Version | None = None  # the release the instance runs today (`--from`, `--gitlab`)
    max_file_bytes: int = MAX_FILE_BYTES
    progress: Callable[[int, str], None] | None = None
    today: date | None = None  # for suppression expiry; None = today
    severity: dict[str, str] = field(default_factory=dict)
    baseline: frozenset[str] = frozenset()
    exclude: tuple[str, ...] = ()  # gitignore patterns (pathspec), from `exclude_base`
    exclude_base: Path | None = None  # the configuration file's folder; None: the scan base
    kinds: dict[str, str] = field(default_factory=dict)  # glob relative to the scan base -> document kind
    display: Path | None = None  # reported paths are relative to it (the command's cwd); None: the scan base
    ci_configs: tuple[CiConfig, ...] = ()  # custom CI/CD configuration files (GitLab's project setting)
    stdin: StdinFile | None = None  # `sunset scan -`
    # told of every file: (path as shown, "read" or "skipped", the kind and why, or why not) — `--show-files`
    files: Callable[[str, str, str], None] | None = None


@dataclass(frozen=True, slots=True)
class StdinFile:
    """`sunset scan -`: the text read from standard input (or why it could not be read) and the name
    it is scanned as (`--stdin-filename`: its kind, its place for local includes and the path shown).
    Without a name it is a pipeline file (`.gitlab-ci.yml` in the working directory) shown as `-`."""

    text: str | ReadProblem
    name: str | None = None


@dataclass(frozen=True, slots=True)
class CiConfig:
    """A custom CI/CD configuration file as the user named it: a path (made absolute from where it was
    given), `path@group/project` or a URL; `source` and `line` say where it was named."""

    value: str
    source: str  # `--ci-config`, or the configuration file's absolute path
    line: int = 0
    given: str = ""  # as the user wrote it, for messages

    def where(self, base: Path) -> str:
        return relative(Path(self.source), base) if os.path.isabs(self.source) else self.source


@dataclass(frozen=True, slots=True)
class Plan:
    """One scan as the user asked for it: flags and `.sunset.yml` resolved (`scanner.commands.scan`)."""

    paths: list[Path]
    policies: list[Policy]
    options: ScanOptions
    fail_on: str
