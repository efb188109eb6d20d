"""`--format concise`: one line per finding, `path:line:col: severity[policy] [*] message`, then
one line per input error and the summary (as ruff's and yamllint's one-line formats)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scanner.core.redact import visible
from scanner.core.results import Report
from scanner.report.options import fix_tiers
from scanner.report.text import summary

if TYPE_CHECKING:
    from scanner.report.options import RenderOptions


def render(report: Report, options: RenderOptions) -> str:
    tiers = fix_tiers(options.policies)
    lines = []
    for f in report.findings:
        loc = f.location
        marker = " [*]" if tiers.get(f.rule_id) == "safe" else ""
        lines.append(f"{visible(loc.path)}:{loc.line}:{loc.column}: {f.severity}[{f.rule_id}]{marker} "
                     f"{visible(f.message)}")
    for e in report.errors:
        where = f"{e.path}:{e.line}" if e.line else e.path
        lines.append(f"{visible(where)}: input error: {visible(e.message)}")
    lines.extend(f"{visible(w.path)}:{w.line}: warning: {visible(w.message)}" for w in report.warnings)
    lines.append(summary(report, tiers))
    return "\n".join(lines) + "\n"
