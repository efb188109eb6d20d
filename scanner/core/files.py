"""Finding pipeline roots on disk and reading files safely.

Reading never raises: a file that is too large, binary, not UTF-8, empty, or a symlink
leading out of its repository becomes a `ReadProblem` with a message a person understands.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

# GitLab's default `max_yaml_size_bytes` (2 MB since gitlab-org/gitlab!160826).
MAX_FILE_BYTES = 2 * 1024 * 1024
CI_NAMES = (".gitlab-ci.yml", ".gitlab-ci.yaml")
SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", ".tox", "__pycache__", ".terraform", ".mypy_cache"})
_SPEC_HEADER = re.compile(r"^spec:\s*$", re.M)


@dataclass(frozen=True, slots=True)
class ReadProblem:
    message: str
    line: int | None = None


def read_text(real: Path, repo_real: Path, max_bytes: int = MAX_FILE_BYTES) -> str | ReadProblem:
    """Read a file given by its resolved path, inside the resolved repository root."""
    try:
        if not real.is_relative_to(repo_real):
            return ReadProblem(f"symlink points outside the repository (to {real})")
        size = real.stat().st_size
        if size > max_bytes:
            return ReadProblem(f"file is {size} bytes, over the {max_bytes}-byte limit; not scanned")
        raw = real.read_bytes()
    except FileNotFoundError:
        return ReadProblem("file does not exist")
    except IsADirectoryError:
        return ReadProblem("is a directory, not a file")
    except OSError as exc:
        return ReadProblem(f"cannot read file: {exc.strerror or exc}")
    if b"\0" in raw[:8192]:
        return ReadProblem("binary file (contains NUL bytes); not scanned")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        return ReadProblem(f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})", line)
    if not text.strip():
        return ReadProblem("empty file")
    return text


def repo_root_of(path: Path, scan_root: Path) -> Path:
    """The nearest ancestor holding `.git`, not above the scanned directory; else the scanned directory."""
    for parent in path.parents:
        if (parent / ".git").exists():
            return parent
        if parent == scan_root:
            break
    return scan_root


def named_repo_root(path: Path) -> Path:
    """The repository root of a file named by the user, where its local includes start, as GitLab
    reads them: the nearest folder holding `.git` above it; else the working directory when the file
    is inside it; else the file's own folder."""
    path = Path(os.path.abspath(path))
    for parent in path.parents:
        if (parent / ".git").exists():
            return parent
    cwd = Path(os.path.abspath(os.curdir))
    return cwd if path.is_relative_to(cwd) else path.parent


def _walk(top: Path) -> Iterator[tuple[Path, list[str]]]:
    for dirpath, dirnames, filenames in os.walk(top):
        # `vendor/bundle`: the gems Bundler installs into a project (CI caches often hold it)
        vendor = os.path.basename(dirpath) == "vendor"
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not (vendor and d == "bundle"))
        yield Path(dirpath), sorted(filenames)


def walk_files(top: Path) -> Iterator[Path]:
    """Every file below `top`, sorted, skipping VCS, dependency and cache folders."""
    for directory, files in _walk(top):
        for name in files:
            yield directory / name


def is_pipeline_root(path: Path) -> bool:
    """`.gitlab-ci.yml`; `<name>.gitlab-ci.yml`, the naming of GitLab's own templates and of shared
    CI template repositories that other projects include; or a CI/CD component template
    (`templates/*.yml` with a `spec:` header)."""
    name = path.name
    return name in CI_NAMES or name.endswith(CI_NAMES) or _is_component(path, path.parent)


def _is_component(path: Path, directory: Path) -> bool:
    """`templates/<name>.yml` or `templates/<name>/template.yml` opening with a `spec:` header."""
    if not path.name.endswith((".yml", ".yaml")):
        return False
    if directory.name != "templates" and (directory.parent.name != "templates" or path.stem != "template"):
        return False
    text = head(path)
    return text is not None and bool(_SPEC_HEADER.search(text)) and "\n---" in text


def head(path: Path, size: int = 4096) -> str | None:
    """The first bytes of a file as text, for recognising its kind; None if unreadable."""
    try:
        with path.open("rb") as fh:
            return fh.read(size).decode("utf-8", "replace")
    except OSError:
        return None


def scan_base(paths: list[Path]) -> Path:
    """The directory reported paths are relative to: the one directory scanned, or the common parent."""
    resolved = [Path(os.path.abspath(p)) for p in paths]
    dirs = [p if p.is_dir() else p.parent for p in resolved]
    if len(dirs) == 1:
        return dirs[0]
    return Path(os.path.commonpath([str(d) for d in dirs]))


def relative(path: Path, base: Path) -> str:
    try:
        return path.relative_to(base).as_posix()
    except ValueError:
        return path.as_posix()


def glob_regex(pattern: str) -> str:
    """A path glob as GitLab reads `include:local` wildcards: `*` within a folder, `**` across folders."""
    parts = re.split(r"(\*\*|\*)", pattern.lstrip("/"))
    return "".join(".*" if t == "**" else "[^/]*" if t == "*" else re.escape(t) for t in parts) + r"\Z"
