"""`sunset scan --statistics`: how many findings of each policy, most first (as `ruff --statistics`);
`[*]` marks what `sunset fix` rewrites. It takes the place of the report on stdout."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from scanner.core.results import Report
from scanner.report.options import fix_tiers

if TYPE_CHECKING:
    from scanner.report.options import RenderOptions


def render(report: Report, options: RenderOptions) -> str:
    tiers = fix_tiers(options.policies)
    counts = Counter(f.rule_id for f in report.findings)
    titles = {f.rule_id: f.title for f in report.findings}
    width = max((len(pid) for pid in counts), default=0)
    digits = len(str(max(counts.values(), default=len(report.errors) or 1)))
    lines = [
        f"{n:>{digits}}  {pid:<{width}}  {'[*]' if tiers.get(pid) == 'safe' else '   '}  {titles[pid]}"
        for pid, n in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    ]
    if report.errors:
        lines.append(f"{len(report.errors):>{digits}}  input error(s)")
    return "\n".join(line.rstrip() for line in lines) + ("\n" if lines else "")
