"""The whole `sunset fix` run: scan, pick each finding's fix, plan, apply per file, write or diff."""

from __future__ import annotations

from dataclasses import dataclass, field

from scanner.core.document import Document
from scanner.core.results import Report
from scanner.engine.scan import Plan
from scanner.fix.apply import ChangedOnDisk, Outcome, fix_text, unified_diff, write_atomic
from scanner.fix.plan import Change, plan
from scanner.fix.sites import Site, collect
from scanner.fix.source import SourceText


@dataclass(slots=True)
class FixRun:
    report: Report
    outcomes: list[Outcome] = field(default_factory=list)
    diffs: list[str] = field(default_factory=list)
    files_changed: int = 0
    without_fix: int = 0  # findings of policies that declare no fix
    not_breaking: int = 0  # fixable findings left alone: `--target` asks only for what breaks there

    def count(self, status: str) -> int:
        return sum(1 for o in self.outcomes if o.status == status)


def run_fix(scan_plan: Plan, unsafe: bool, write: bool, only_breaking: bool = False) -> FixRun:
    """`only_breaking`: fix only findings that break at the plan's target (severity error there)."""
    report, sites = collect(scan_plan.paths, scan_plan.policies, scan_plan.options)
    run = FixRun(report, without_fix=len(report.findings) - len(sites))
    if only_breaking:
        breaking = [s for s in sites if s.finding.severity == "error"]
        run.not_breaking, sites = len(sites) - len(breaking), breaking
    per_doc: dict[int, tuple[Document, list[Change]]] = {}
    sources: dict[int, SourceText] = {}
    for site in sites:
        change = _change(site, unsafe, run, sources)
        if change is not None:
            per_doc.setdefault(id(site.doc), (site.doc, []))[1].append(change)
    for doc, changes in per_doc.values():
        _fix_document(doc, changes, write, run)
    run.outcomes.sort(
        key=lambda o: (
            o.site.finding.location.path,
            o.site.finding.location.line,
            o.site.finding.location.column,
            o.site.finding.rule_id,
        )
    )
    return run


def _change(site: Site, unsafe: bool, run: FixRun, sources: dict[int, SourceText]) -> Change | None:
    """The change to apply for this finding, or None (its outcome is recorded)."""
    matched = site.hit.matched
    spec = next((f for f in site.hit.policy.fixes if f.selects(matched)), None)
    if spec is None:
        run.outcomes.append(Outcome(site, "skipped", f"no automatic fix for `{matched}`"))
        return None
    src = sources.setdefault(id(site.doc), SourceText(site.doc.text))
    change = plan(spec, site, src)
    if isinstance(change, str):
        run.outcomes.append(Outcome(site, "skipped", change))
        return None
    if spec.tier == "unsafe" and not unsafe:
        run.outcomes.append(Outcome(site, "unsafe", change.summary))
        return None
    return change


def _fix_document(doc: Document, changes: list[Change], write: bool, run: FixRun) -> None:
    text, outcomes = fix_text(doc, changes)
    if text != doc.text:
        run.diffs.append(unified_diff(doc.path, doc.text, text))
        if write:
            try:
                write_atomic(doc.abspath, doc.text, text)
            except (OSError, ChangedOnDisk) as exc:
                detail = str(exc) if isinstance(exc, ChangedOnDisk) else f"cannot write the file: {exc}"
                outcomes = [Outcome(o.site, "unwritten", detail) if o.status == "fixed" else o for o in outcomes]
                run.diffs.pop()
            else:
                run.files_changed += 1
        else:
            run.files_changed += 1
    run.outcomes += outcomes
