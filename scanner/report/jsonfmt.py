"""The JSON contract, version 1: other tools and the merge-request features read this."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from scanner import __version__
from scanner.core.results import Finding, Report

if TYPE_CHECKING:
    from scanner.report.options import RenderOptions

CONTRACT_VERSION = 1


def finding_dict(f: Finding, tiers: Mapping[str, str] | None = None) -> dict[str, Any]:
    """One finding; `fixable`/`fix_tier` (added in contract v1, fields only added) say whether
    `sunset fix` can rewrite it, and at which tier (`safe`, or `unsafe` with `--unsafe`)."""
    loc = f.location
    tier = (tiers or {}).get(f.rule_id)
    return {
        "rule_id": f.rule_id,
        "title": f.title,
        "severity": f.severity,
        "path": loc.path,
        "line": loc.line,
        "column": loc.column,
        "end_line": loc.end_line,
        "end_column": loc.end_column,
        "message": f.message,
        "deprecated_in": f.deprecated_in,
        "removed_in": f.removed_in,
        "replacement": f.replacement,
        "docs_url": f.docs_url,
        "fingerprint": f.fingerprint,
        "symbolic_path": loc.symbolic,
        "snippet": loc.snippet,
        "origin": f.origin,  # added within version 1: `gitlab`, `deprecation-summary`, or a local policy's
        "fixable": tier is not None,
        "fix_tier": tier,
        # added within version 1: GitLab's record today (`removed_in` above is the effective release)
        "removal": {
            "status": f.removal,
            "first_announced": f.first_announced,
            "history": [
                {"release": m.release, "event": m.event, "removed_in": m.removed_in, "note": m.note} for m in f.history
            ],
        },
    }


def diff_dict(report: Report, tiers: Mapping[str, str] | None = None) -> dict[str, Any]:
    """`--diff-base` (added within version 1): what the findings were compared with, the counts, and the
    findings at the base that are gone."""
    d = report.diff
    assert d is not None
    new = report.new_findings()
    return {"base": d.base, "commit": d.commit, "note": d.note, "new": len(new),
            "existing": len(report.findings) - len(new), "fixed": [finding_dict(f, tiers) for f in d.fixed],
            "new_errors": len(report.new_errors())}


def upgrade_dict(report: Report) -> dict[str, Any]:
    """Added within contract v1, with `--from`: the release the instance runs, GitLab's required stops
    between it and the target, and at each step the findings (indexes into `findings`) whose change
    takes effect there."""
    from scanner.core.upgrade import past_known_stops
    from scanner.core.versions import Version

    return {
        "from": report.current,
        "target": report.target,
        "stops_known_until": past_known_stops(Version.parse(report.target)),
        "steps": [
            {"release": s.release, "required": s.required, "conditional": s.conditional, "note": s.note,
             "findings": list(s.findings), "policies": sorted({report.findings[n].rule_id for n in s.findings})}
            for s in report.upgrade
        ],
    }


def report_dict(report: Report, tiers: Mapping[str, str] | None = None) -> dict[str, Any]:
    data = _report_dict(report, tiers)
    if report.diff is not None:
        d = report.diff
        for item, f in zip(data["findings"], report.findings, strict=True):
            item["change"] = "new" if d.is_new(f) else "existing"
        for item, e in zip(data["errors"], report.errors, strict=True):
            item["change"] = "new" if d.is_new_error(e) else "existing"
        data["diff"] = diff_dict(report, tiers)
    return data


def _report_dict(report: Report, tiers: Mapping[str, str] | None = None) -> dict[str, Any]:
    return {
        "version": CONTRACT_VERSION,
        "tool": {"name": "sunset", "version": __version__},
        "target": report.target,
        **({"from": report.current, "upgrade": upgrade_dict(report)} if report.current else {}),
        "findings": [finding_dict(f, tiers) for f in report.findings],
        "errors": [{"path": e.path, "line": e.line, "message": e.message} for e in report.errors],
        # added in contract v1: things that do not fail the run (a suppression that suppresses nothing)
        "warnings": [{"path": w.path, "line": w.line, "message": w.message} for w in report.warnings],
        "includes": [
            {"from": i.source, "line": i.line, "kind": i.kind, "target": i.target, "resolved": i.resolved}
            | ({"note": i.note} if i.note else {})
            for i in report.includes
        ],
        "summary": {
            "files_scanned": report.files_scanned,
            "findings": len(report.findings),
            "errors": len(report.errors),
            "warnings": len(report.warnings),
            "suppressed": report.suppressed,
            "baselined": report.baselined,
            "by_severity": report.severity_counts(),
        },
    }


def instance_dict(report: Report) -> dict[str, Any]:
    """An instance scan's additions to contract v1 (fields added only; absent for a checkout scan)."""
    from scanner.report.projects import by_file, project_findings, shared_files

    files = by_file(report)
    projects = []
    for p in report.projects:
        found = project_findings(report, p, files)
        counts = {s: sum(1 for f in found if f.severity == s) for s in ("error", "warning", "info")}
        projects.append({
            "project": p.project, "ref": p.ref, "root": p.root, "status": p.status,
            "files": [{"path": u.path, "how": u.how, "chain": list(u.chain)} for u in p.files],
            "findings": counts,
            "policies": sorted({f.rule_id for f in found}),
        })
    shared = [{"path": s.path, "findings": len(s.findings), "policies": sorted({f.rule_id for f in s.findings}),
               "projects": [{"project": name, "how": how, "chain": list(chain)} for name, chain, how in s.projects]}
              for s in shared_files(report)]
    return {"projects": projects, "shared_files": shared}


def render(report: Report, options: RenderOptions) -> str:
    from scanner.report.options import fix_tiers

    data = report_dict(report, fix_tiers(options.policies))
    if report.projects:
        data |= instance_dict(report)
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
