"""The instance view of a report (`sunset scan --gitlab`): findings per project, and the blast radius of
each shared file — the projects whose pipelines reach it, and through which includes.

A file's findings are reported once, under the file; a project "has" every finding of every file its
pipeline reaches. Formats read these views; nothing here changes the report.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from scanner.core.results import Finding, ProjectRecord, Report


@dataclass(slots=True)
class Shared:
    """A file reached by more than one project."""

    path: str
    projects: list[tuple[str, tuple[str, ...], str]] = field(default_factory=list)  # project, chain, how
    findings: list[Finding] = field(default_factory=list)


def by_file(report: Report) -> dict[str, list[Finding]]:
    files: dict[str, list[Finding]] = defaultdict(list)
    for f in report.findings:
        files[f.location.path].append(f)
    return files


def project_findings(report: Report, project: ProjectRecord, files: dict[str, list[Finding]]) -> list[Finding]:
    """Every finding in a file the project's pipeline reaches (each file counted once)."""
    seen: set[str] = set()
    out: list[Finding] = []
    for use in project.files:
        if use.path not in seen:
            seen.add(use.path)
            out += files.get(use.path, [])
    return out


def shared_files(report: Report) -> list[Shared]:
    """Files reached by two projects or more, the widest first (then those with findings first)."""
    shared: dict[str, Shared] = {}
    for p in report.projects:
        reached: set[str] = set()
        for use in p.files:
            if use.path in reached:
                continue
            reached.add(use.path)
            shared.setdefault(use.path, Shared(use.path)).projects.append((p.project, use.chain, use.how))
    files = by_file(report)
    out = []
    for s in shared.values():
        if len({name for name, _, _ in s.projects}) > 1:
            s.findings = files.get(s.path, [])
            out.append(s)
    out.sort(key=lambda s: (-len(s.projects), -len(s.findings), s.path))
    return out
