"""`sunset scan --diff-base REF`: what a change adds and removes, as GitLab's Code Quality widget shows it.

The base is the merge base of `HEAD` and REF (the commit the branch started from, so changes that
landed on REF since are not counted against the branch); in a shallow clone without that history,
REF itself, and the report says so. Its files are written from git's objects into a private
temporary folder — the repository and its worktrees are not touched — and scanned with the same plan (the same
policies, configuration, target and exclusions, paths mapped into the folder), so findings are shown
under the same paths and carry the same fingerprints. A finding of the working tree whose fingerprint
is also at the base is `existing`; the rest are new; a base finding whose fingerprint is gone is fixed.
Input errors are matched by path and message.

Offline: git reads only the local repository. A REF that is not in the clone is a usage error that
says how to fetch it.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import IO

from scanner.core.exits import UsageError
from scanner.core.results import Diff, Report
from scanner.engine.scan import Plan, scan

GIT_TIMEOUT = 300  # seconds: `git archive` of a large monorepo


def _git(repo: Path, *args: str) -> str | None:
    """git's output, or None when git says no (an unknown ref, no common history)."""
    try:
        done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=GIT_TIMEOUT,
                              check=False)
    except FileNotFoundError:
        raise UsageError("--diff-base needs git, and git is not installed") from None
    return done.stdout.strip() if done.returncode == 0 else None


def base_commit(repo: Path, ref: str) -> tuple[str, str]:
    """The commit to compare with and a note: the merge base of HEAD and `ref`, else `ref` itself."""
    commit = _git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    if not commit:
        raise UsageError(f"--diff-base: {ref!r} is not a commit in this clone; fetch it first "
                         f"(git fetch origin {ref}), or in GitLab CI give the merge request's "
                         "$CI_MERGE_REQUEST_DIFF_BASE_SHA")
    merge_base = _git(repo, "merge-base", "HEAD", commit)
    if merge_base:
        return merge_base, ""
    return commit, f"no common history with HEAD in this clone (shallow?); compared with {ref} itself"


def _extract(repo: Path, commit: str, into: Path) -> None:
    """Every file of the commit below `into`, byte for byte (`git ls-tree` and one `git cat-file
    --batch`; unlike `git archive`, `export-ignore` attributes leave nothing out). Symlinks that stay
    inside the tree are made; submodules are left out, as a clone without them has nothing there."""
    listing = _git(repo, "ls-tree", "-r", "-z", "--full-tree", commit)
    if listing is None:
        raise UsageError(f"--diff-base: cannot list the files of {commit[:12]}")
    entries = []
    for item in filter(None, listing.split("\0")):
        meta, _, name = item.partition("\t")
        mode, kind, sha = meta.split()
        if kind == "blob" and not name.startswith("/") and ".." not in name.split("/"):
            entries.append((mode, sha, name))
    (into / ".git").mkdir()  # the repository root, where local includes start, as in the working tree
    proc = subprocess.Popen(["git", "-C", str(repo), "cat-file", "--batch"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None
    feeder = threading.Thread(target=_feed, args=(proc.stdin, [sha for _, sha, _ in entries]), daemon=True)
    feeder.start()
    try:
        for mode, _, name in entries:
            header = proc.stdout.readline().split()
            size = int(header[2]) if len(header) == 3 else 0
            target = into / name
            target.parent.mkdir(parents=True, exist_ok=True)
            if mode == "120000":
                link = proc.stdout.read(size).decode("utf-8", "surrogateescape")
                if (target.parent / link).resolve().is_relative_to(into.resolve()):
                    target.symlink_to(link)
            else:
                with target.open("wb") as out:
                    _copy(proc.stdout, out, size)
                if mode == "100755":
                    target.chmod(0o755)
            proc.stdout.read(1)  # the newline after each object
    finally:
        feeder.join(timeout=GIT_TIMEOUT)
        proc.stdout.close()
        proc.wait(timeout=GIT_TIMEOUT)


def _feed(stdin: IO[bytes], shas: list[str]) -> None:
    with stdin:
        for sha in shas:
            stdin.write(sha.encode() + b"\n")


def _copy(source: IO[bytes], out: IO[bytes], size: int) -> None:
    while size > 0:
        chunk = source.read(min(size, 1 << 20))
        if not chunk:
            raise UsageError("--diff-base: git cat-file ended early")
        out.write(chunk)
        size -= len(chunk)


def _moved(path: Path, repo: Path, into: Path) -> Path:
    """`path` of the working tree as it lies in the extracted base; outside the repository: unchanged."""
    absolute = Path(os.path.abspath(path))
    real = Path(os.path.realpath(absolute.parent)) / absolute.name  # the repository's path is resolved
    return into / real.relative_to(repo) if real.is_relative_to(repo) else absolute


def base_plan(p: Plan, repo: Path, into: Path) -> Plan:
    """The same scan, of the base's files: paths, shown-path base, exclusions and custom CI/CD
    configuration files moved into the extracted tree."""
    o = p.options
    display = o.display or Path.cwd()
    if not Path(os.path.realpath(display)).is_relative_to(repo):
        raise UsageError("--diff-base: run sunset inside the repository (paths are shown from the working directory)")
    configs = tuple(dataclasses.replace(c, value=str(_moved(Path(c.value), repo, into)))
                    if os.path.isabs(c.value) else c for c in o.ci_configs)
    options = dataclasses.replace(
        o, progress=None, files=None, display=_moved(display, repo, into), ci_configs=configs,
        exclude_base=_moved(o.exclude_base, repo, into) if o.exclude_base else None)
    return dataclasses.replace(p, paths=[_moved(x, repo, into) for x in p.paths], options=options)


def compare(report: Report, p: Plan, ref: str) -> Report:
    """`report` (the working tree's) with its `diff` against `ref`'s merge base."""
    if p.options.stdin is not None:
        raise UsageError("--diff-base compares files in a repository; it cannot be used with `-`")
    start = Path(os.path.abspath(p.paths[0] if p.paths else Path.cwd()))
    top = _git(start if start.is_dir() else start.parent, "rev-parse", "--show-toplevel")
    if not top:
        raise UsageError(f"--diff-base: {start} is not in a git repository")
    repo = Path(os.path.realpath(top))
    commit, note = base_commit(repo, ref)
    folder = Path(tempfile.mkdtemp(prefix="sunset-base-"))
    try:
        _extract(repo, commit, folder)
        theirs = base_plan(p, repo, folder)
        base = scan([x for x in theirs.paths if x.exists()], theirs.policies, theirs.options)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    ours = {f.fingerprint for f in report.findings}
    before = {f.fingerprint for f in base.findings}
    errors = {(e.path, e.message) for e in base.errors} & {(e.path, e.message) for e in report.errors}
    report.diff = Diff(base=ref, commit=commit, existing=frozenset(ours & before), existing_errors=frozenset(errors),
                       fixed=tuple(f for f in base.findings if f.fingerprint not in ours), note=note)
    return report

