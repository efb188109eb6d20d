"""The journal of an instance scan (`--state FILE`): one JSON line per finished project, written as it
finishes, with what that project added to the report (findings of files first seen there, errors,
includes). A scan started again with the same file skips the projects it lists and restores their
part of the report, so an interrupted scan of 10,000 projects resumes where it stopped.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import IO, Any

from scanner.core.results import FileUse, Finding, IncludeRecord, InputError, Location, Move, ProjectRecord, Report

JOURNAL_VERSION = 1


@dataclasses.dataclass(slots=True)
class Mark:
    """Where the report's lists stood before a project was added."""

    findings: int
    errors: int
    includes: int
    files_scanned: int
    suppressed: int
    baselined: int

    @classmethod
    def of(cls, report: Report) -> Mark:
        return cls(len(report.findings), len(report.errors), len(report.includes), report.files_scanned,
                   report.suppressed, report.baselined)


def entry(report: Report, mark: Mark, record: ProjectRecord, checked: list[str]) -> dict[str, Any]:
    return {
        "version": JOURNAL_VERSION,
        "project": dataclasses.asdict(record),
        "checked": checked,
        "findings": [dataclasses.asdict(f) for f in report.findings[mark.findings:]],
        "errors": [dataclasses.asdict(e) for e in report.errors[mark.errors:]],
        "includes": [dataclasses.asdict(i) for i in report.includes[mark.includes:]],
        "counts": [report.files_scanned - mark.files_scanned, report.suppressed - mark.suppressed,
                   report.baselined - mark.baselined],
    }


def _record(d: dict[str, Any]) -> ProjectRecord:
    files = tuple(FileUse(u["path"], tuple(u["chain"]), u["how"]) for u in d["files"])
    return ProjectRecord(d["project"], d["ref"], d["root"], d["status"], files)


def _finding(f: dict[str, Any]) -> Finding:
    """A finding as `dataclasses.asdict` wrote it: its nested records rebuilt."""
    return Finding(**(f | {"location": Location(**f["location"]),
                           "history": tuple(Move(**m) for m in f.get("history", ()))}))


def restore(path: Path, report: Report, checked: set[str]) -> set[str]:
    """Projects the journal holds, their part put back into `report`; `checked` gains their files.
    A line cut short by the interruption is ignored (that project is scanned again)."""
    done: set[str] = set()
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return done
    for line in lines:
        try:
            d = json.loads(line)
            record = _record(d["project"])
            findings = [_finding(f) for f in d["findings"]]
            errors = [InputError(**e) for e in d["errors"]]
            includes = [IncludeRecord(**i) for i in d["includes"]]
            scanned, suppressed, baselined = d["counts"]
        except (ValueError, KeyError, TypeError):
            continue
        report.projects.append(record)
        report.findings += findings
        report.errors += errors
        report.includes += includes
        report.files_scanned += scanned
        report.suppressed += suppressed
        report.baselined += baselined
        checked.update(d["checked"])
        done.add(record.project)
    return done


def write(out: IO[str], data: dict[str, Any]) -> None:
    out.write(json.dumps(data, ensure_ascii=False) + "\n")
    out.flush()
