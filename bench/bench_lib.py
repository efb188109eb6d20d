"""Shared plumbing for bench/run.py: the input roots, timing, results and machine facts."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
import time
from collections.abc import Container, Mapping
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent


class ToolFailed(Exception):
    """A benchmarked command exited with an unexpected status."""


@dataclass
class Corpus:
    """The benchmark input: ``count`` roots cycling byte-identically through ``sources``."""

    sources: list[Path]
    roots_dir: Path
    files: list[Path]
    source_of: dict[Path, Path]
    total_bytes: int

    def describe(self) -> str:
        return (
            f"{len(self.files)} files, {self.total_bytes:,} bytes, in {self.roots_dir} "
            f"(cycling {len(self.sources)} corpus files from {self.sources[0].parent})"
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "files": len(self.files),
            "bytes": self.total_bytes,
            "unique_files": len(self.sources),
            "corpus": str(self.sources[0].parent),
        }


@dataclass
class Measurement:
    """Wall-clock runs of one tool; ``skipped`` says why there are none."""

    tool: str
    runs: list[float] = field(default_factory=list)
    skipped: str | None = None
    notes: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def best(self) -> float | None:
        return min(self.runs) if self.runs else None


def progress(message: str) -> None:
    """Progress goes to stderr so stdout stays the Markdown report."""
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def build_corpus(source_dir: Path, dest: Path, count: int) -> Corpus:
    """Copy ``source_dir``'s files, cycling, to ``dest/repo-NNNN/.gitlab-ci.yml``."""
    if not source_dir.is_dir():
        raise ValueError(f"corpus directory not found: {source_dir}")
    sources = sorted(path for path in source_dir.iterdir() if path.is_file())
    if not sources or count < 1:
        raise ValueError(f"need at least one corpus file and one root (got {source_dir})")
    files: list[Path] = []
    source_of: dict[Path, Path] = {}
    for index in range(count):
        target = dest / f"repo-{index:04d}" / ".gitlab-ci.yml"
        target.parent.mkdir(parents=True)
        shutil.copyfile(sources[index % len(sources)], target)
        files.append(target)
        source_of[target] = sources[index % len(sources)]
    total = sum(path.stat().st_size for path in files)
    return Corpus(sources, dest, files, source_of, total)


def run_timed(
    cmd: list[str],
    *,
    out: Path,
    ok: Container[int],
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> float:
    """Run ``cmd`` once, stdout to ``out`` (stderr beside it); return wall seconds."""
    err = out.with_name(out.name + ".stderr")
    with out.open("wb") as stdout, err.open("wb") as stderr:
        start = time.perf_counter()
        proc = subprocess.run(cmd, stdout=stdout, stderr=stderr, env=env, cwd=cwd, check=False)
        elapsed = time.perf_counter() - start
    if proc.returncode not in ok:
        tail = err.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-5:]
        name = " ".join([Path(cmd[0]).name, *cmd[1:2]])
        raise ToolFailed(f"`{name} ...` exited {proc.returncode}: " + (" / ".join(tail) or "no stderr"))
    return elapsed


def tool_version(cmd: list[str], env: Mapping[str, str] | None = None) -> str:
    """Last line a ``--version`` command prints, or why there is none."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unavailable ({exc.__class__.__name__})"
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    return lines[-1].strip() if proc.returncode == 0 and lines else "unavailable"


def package_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def memory_total() -> str:
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            kib = int(meminfo.readline().split()[1])
    except (OSError, ValueError, IndexError):
        return "unknown"
    return f"{kib / 2**20:.1f} GiB"


def load_average() -> str:
    """1/5/15-minute load: other work on a 2-core machine skews every number here."""
    try:
        return " / ".join(f"{load:.2f}" for load in os.getloadavg())
    except OSError:
        return "unknown"


def machine_info(tool_versions: Mapping[str, str], load_before: str) -> dict[str, str]:
    """Facts that decide how far these numbers travel to another machine."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else "?"
    return {
        "nproc": f"{os.cpu_count()} (usable by this process: {usable})",
        "memory": memory_total(),
        "platform": platform.platform(),
        "python (parse floor)": f"{platform.python_version()} ({sys.executable})",
        "ruamel.yaml": package_version("ruamel.yaml"),
        "ruamel.yaml.clib": package_version("ruamel.yaml.clib"),
        **tool_versions,
        "load average before / after the runs": f"{load_before} -> {load_average()}",
    }
