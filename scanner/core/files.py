"""Finding pipeline roots on disk and reading files safely.

Reading never raises nor blocks: a file that is too large, binary, not UTF-8, empty, not a regular
file (a FIFO, a device, a socket), or a symlink leading out of its repository becomes a
`ReadProblem` with a message a person understands. Walking reports what it cannot read (a folder,
a file, a symlink loop, anything that is not a regular file) as a `Skipped` entry instead of
stopping or hanging. File names are carried losslessly (undecodable bytes as surrogates) and made
printable where they become report strings (`relative`, `printable`).
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from scanner.core.lines import lf_line_ends

# GitLab's default `max_yaml_size_bytes` (2 MB since gitlab-org/gitlab!160826).
MAX_FILE_BYTES = 2 * 1024 * 1024
CI_NAMES = (".gitlab-ci.yml", ".gitlab-ci.yaml")
SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", ".tox", "__pycache__", ".terraform", ".mypy_cache"})
MISSING = "does not exist"
_SPEC_HEADER = re.compile(r"^spec:\s*$", re.M)
_SURROGATE = re.compile("[\ud800-\udfff]")
_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)  # a FIFO opens without waiting
_NOT_REGULAR = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"))


@dataclass(frozen=True, slots=True)
class ReadProblem:
    message: str
    line: int | None = None


@dataclass(frozen=True, slots=True)
class Skipped:
    """A walked entry that is not read: why, as an input error without a line."""

    path: Path
    message: str


def not_regular(mode: int) -> str:
    what = next((name for test, name in _NOT_REGULAR if test(mode)), "not a file")
    return f"not a regular file ({what}); not scanned"


def path_problem(path: Path) -> str | None:
    """Why `path` cannot be read as a regular file (following symlinks), or None if it can."""
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return MISSING
    except OSError as exc:
        return os_problem(exc)
    except ValueError:  # an embedded NUL, or a surrogate that stands for no byte
        return MISSING
    return None if stat.S_ISREG(mode) else not_regular(mode)


def os_problem(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "symlink loop"
    if exc.errno == errno.ENAMETOOLONG:
        return "path too long"
    return exc.strerror or str(exc)


def read_text(real: Path, repo_real: Path, max_bytes: int = MAX_FILE_BYTES) -> str | ReadProblem:
    """Read a file given by its resolved path, inside the resolved repository root."""
    if not real.is_relative_to(repo_real):
        return ReadProblem(f"symlink points outside the repository (to {real})")
    raw = _read_bytes(real, max_bytes)
    return raw if isinstance(raw, ReadProblem) else decode_text(raw)


def decode_text(raw: bytes) -> str | ReadProblem:
    """A scanned file's bytes as text (from disk, or standard input for `sunset scan -`)."""
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


def read_settings_text(path: Path, max_bytes: int = MAX_FILE_BYTES) -> str | ReadProblem:
    """sunset's own configuration file: a regular file (a FIFO named `.sunset.yml` is refused, not
    waited on), size-capped, UTF-8; empty is fine (an empty configuration)."""
    raw = _read_bytes(path, max_bytes)
    if isinstance(raw, ReadProblem):
        return raw
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        return ReadProblem(f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})", line)


def _read_bytes(path: Path, max_bytes: int) -> bytes | ReadProblem:
    """At most `max_bytes` of a regular file, checked on the open descriptor (no race, no wait)."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        return ReadProblem("file does not exist")
    except IsADirectoryError:
        return ReadProblem("is a directory, not a file")
    except OSError as exc:
        return ReadProblem(f"cannot read file: {os_problem(exc)}")
    try:
        info = os.fstat(fd)
    except OSError as exc:
        os.close(fd)
        return ReadProblem(f"cannot read file: {os_problem(exc)}")
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        return ReadProblem("is a directory, not a file" if stat.S_ISDIR(info.st_mode) else not_regular(info.st_mode))
    with open(fd, "rb") as fh:
        try:
            if info.st_size > max_bytes:
                return ReadProblem(f"file is {info.st_size} bytes, over the {max_bytes}-byte limit; not scanned")
            raw = fh.read(info.st_size + 1)
            if len(raw) > info.st_size:  # it grew while being read
                raw += fh.read(max_bytes + 1 - len(raw))
        except OSError as exc:
            return ReadProblem(f"cannot read file: {os_problem(exc)}")
    if len(raw) > max_bytes:
        return ReadProblem(f"file is over the {max_bytes}-byte limit; not scanned")
    return raw


def repo_root_of(path: Path, scan_root: Path) -> Path:
    """Where the local includes of a pipeline file found below `scan_root` start: see `named_repo_root`;
    without a folder holding `.git`, the scanned directory. The same file gets the same root whichever
    folder is scanned."""
    return named_repo_root(path, scan_root)


def named_repo_root(path: Path, fallback: Path | None = None, by_name: bool = True) -> Path:
    """Where a pipeline file's local includes start, as GitLab resolves them, from its repository's
    root. GitLab reads a `.gitlab-ci.yml` only at a repository's root, so a `.gitlab-ci.yml` found in a
    folder (a sample, a fixture, a project kept in a subfolder) starts at that folder (`by_name`; a
    custom CI/CD configuration file of any name starts at the repository root). Any other file: the
    nearest folder holding `.git` above it; without one `fallback`, by default the working directory
    when the file is inside it, else the file's own folder."""
    path = Path(os.path.abspath(path))
    if by_name and path.name in CI_NAMES:
        return path.parent
    for parent in path.parents:
        if (parent / ".git").exists():
            return parent
    if fallback is not None:
        return fallback
    cwd = Path(os.path.abspath(os.curdir))
    return cwd if path.is_relative_to(cwd) else path.parent


def _skip_dir(directory: str, name: str) -> bool:
    # `vendor/bundle`: the gems Bundler installs into a project (CI caches often hold it)
    return name in SKIP_DIRS or (name == "bundle" and os.path.basename(directory) == "vendor")


def walk(top: Path, skip_dir: Callable[[str, str], bool] = _skip_dir,
         on_skip: Callable[[str, str], None] | None = None) -> Iterator[Path | Skipped]:
    """Every regular, readable file below `top` outside VCS, dependency and cache folders, depth first,
    each folder's files sorted before its sorted sub-folders (symlinked folders are not entered); what
    cannot be read, as `Skipped`. `on_skip(folder, why)` hears of each folder not entered."""
    stack = [os.fspath(top)]
    while stack:
        directory = stack.pop()
        try:
            with os.scandir(directory) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError as exc:
            yield Skipped(Path(directory), f"cannot read folder: {os_problem(exc)}; not scanned")
            continue
        folders = []
        for entry in entries:
            if _is_dir(entry):
                if not entry.is_symlink() and not skip_dir(directory, entry.name):
                    folders.append(entry.path)
                elif on_skip is not None:
                    on_skip(entry.path, "a symlinked folder: not entered" if entry.is_symlink() else
                            "a version control, dependency or cache folder: not entered")
            else:
                yield _walked_file(entry)
        stack.extend(reversed(folders))


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _walked_file(entry: os.DirEntry[str]) -> Path | Skipped:
    path = Path(entry.path)
    try:
        if entry.is_file():  # a plain file: known from the listing, no system call
            readable = os.access(entry.path, os.R_OK)
            return path if readable else Skipped(path, "cannot read file: Permission denied; not scanned")
        mode = os.stat(entry.path).st_mode
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return Skipped(path, "symlink loop; not scanned")
        return path  # a dangling symlink: reported when read, if it is a file sunset reads
    return Skipped(path, not_regular(mode))


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
    """The first bytes of a regular file as text, for recognising its kind; None if unreadable. A lone
    CR is read as LF (`scanner.core.lines`), so a line-anchored pattern sees the file's lines."""
    try:
        with open(os.open(path, _OPEN_FLAGS), "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                return None
            return lf_line_ends(fh.read(size).decode("utf-8", "replace"))
    except (OSError, ValueError):
        return None


def scan_base(paths: list[Path]) -> Path:
    """The directory reported paths are relative to: the one directory scanned, or the common parent."""
    resolved = [Path(os.path.abspath(p)) for p in paths]
    dirs = [p if p.is_dir() else p.parent for p in resolved]
    if len(dirs) == 1:
        return dirs[0]
    return Path(os.path.commonpath([str(d) for d in dirs]))


def display_base(paths: list[Path], cwd: Path | None = None) -> Path:
    """The directory reported paths are relative to: the working directory when everything scanned is
    inside it (as ruff, yamllint, editors, `git apply` and GitLab's Code Quality expect), else the
    scanned directory (`scan_base`), so a scan of a folder elsewhere still reports short paths."""
    here = Path(os.path.abspath(cwd or os.getcwd()))
    if all(Path(os.path.abspath(p)).is_relative_to(here) for p in paths):
        return here
    return scan_base(paths)


def relative(path: Path, base: Path) -> str:
    """A path as the report shows it: relative to `base` when below it, and printable."""
    try:
        return printable(path.relative_to(base).as_posix())
    except ValueError:
        return printable(path.as_posix())


def shorten(target: str, most: int = 60) -> str:
    """A path or include target for a message: at most `most` characters."""
    return target if len(target) <= most else target[:most] + "…"


def not_scanned(problem: str) -> str:
    return problem if problem.endswith("not scanned") else f"{problem}; not scanned"


def printable(text: str) -> str:
    """`text` with every lone surrogate shown as an escape: a byte of a file name that is not UTF-8
    (`\\udcff`, Python's surrogateescape) as `\\xff`, any other as `\\ud800`, so the report encodes."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return _SURROGATE.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


def inside(path: Path, root: Path) -> bool:
    """`path`, symlinks followed, is `root` or below it: what a repository's own configuration may name."""
    try:
        return Path(os.path.realpath(path)).is_relative_to(os.path.realpath(root))
    except (OSError, ValueError):
        return False
