"""What an `include:local` names in a repository: one file, or the files a wildcard matches.

GitLab's limits hold here: 150 includes per pipeline (`ci_max_includes`) and 100 levels of nesting.
A wildcard is matched against the repository's YAML files, walked once per scan (`Wildcards`), and
a pipeline may test at most `MAX_WILDCARD_TESTS` file names with its wildcards, so a thousand
patterns over a large repository stay bounded in time; what is over a limit is one input error.
A file of another kind that a wildcard matches (database.yml, compose, Helm values, a Kubernetes
manifest) is not read as a pipeline file: it is checked as its own kind.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from scanner.core.files import MISSING, Skipped, path_problem, relative, shorten
from scanner.engine.globs import Named, glob_files, yaml_files

MAX_INCLUDES = 150
MAX_INCLUDE_DEPTH = 100
MAX_WILDCARD_TESTS = 1_000_000


@dataclass(slots=True)
class Pipeline:
    repo: Path
    repo_real: Path = field(init=False)
    includes: int = 0
    over_limit: bool = False
    wildcard_tests: int = 0

    def __post_init__(self) -> None:
        self.repo_real = self.repo.resolve()


@dataclass(slots=True)
class Wildcards:
    """Each repository's YAML files, walked once for all the wildcard includes of a scan."""

    files: dict[Path, list[Named]] = field(default_factory=dict)

    def of(self, repo: Path) -> list[Named]:
        if repo not in self.files:
            self.files[repo] = yaml_files(repo)
        return self.files[repo]


def local_targets(target: str, pipeline: Pipeline, wildcards: Wildcards, error: Callable[[str], None],
                  may_include: Callable[[Path], bool]) -> list[tuple[Path, Path]]:
    """The files a local include names, each with its resolved path, inside the repository."""
    repo, repo_real = pipeline.repo, pipeline.repo_real
    rel = posixpath.normpath(target.lstrip("/"))
    if rel == ".." or rel.startswith("../") or posixpath.isabs(rel):
        error(f"include `{target}` escapes the repository root")
        return []
    if "*" not in rel:
        path = repo / rel
        if (problem := path_problem(path)) is not None:
            said = "does not exist" if problem == MISSING else f"cannot be read: {problem}"
            error(f"local include `{shorten(target)}` {said}")
            return []
        real = path.resolve()
        if not real.is_relative_to(repo_real):
            error(f"include `{target}` escapes the repository root (symlink)")
            return []
        return [(path, real)]
    files = wildcards.of(repo)
    pipeline.wildcard_tests += len(files)
    if pipeline.over_limit or pipeline.wildcard_tests > MAX_WILDCARD_TESTS:
        error(f"local include pattern `{shorten(target)}` not expanded: over {MAX_INCLUDES} includes, or over "
              f"{MAX_WILDCARD_TESTS:,} file names tested by wildcards, in this pipeline")
        return []
    found = []
    for p in glob_files(repo, rel, files):
        if isinstance(p, Skipped):
            error(f"local include `{shorten(target)}` matches `{relative(p.path, repo)}`: {p.message}")
        elif (r := p.resolve()).is_relative_to(repo_real) and may_include(p):
            found.append((p, r))
    if not found:
        error(f"local include pattern `{shorten(target)}` matches no file")
    return found
