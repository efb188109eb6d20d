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


def report_dict(report: Report, tiers: Mapping[str, str] | None = None) -> dict[str, Any]:
    return {
        "version": CONTRACT_VERSION,
        "tool": {"name": "sunset", "version": __version__},
        "target": report.target,
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


def render(report: Report, options: RenderOptions) -> str:
    from scanner.report.options import fix_tiers

    return json.dumps(report_dict(report, fix_tiers(options.policies)), indent=2, ensure_ascii=False) + "\n"
