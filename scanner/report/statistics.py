"""`sunset scan --statistics`: how many findings of each policy, most first (as `ruff --statistics`);
`[*]` marks what `sunset fix` rewrites. It takes the place of the report on stdout.

With `--diff-base` each policy gets three counts under a header line: the findings the change adds
(`new`, the ones the exit status counts), those already at the base (`existing`) and those it removes
(`fixed`); new ones first."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from scanner.core.results import Report
from scanner.report.options import fix_tiers

if TYPE_CHECKING:
    from scanner.report.options import RenderOptions


def render(report: Report, options: RenderOptions) -> str:
    if report.diff is not None:
        return _compared(report, options)
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


def _compared(report: Report, options: RenderOptions) -> str:
    d = report.diff
    assert d is not None
    tiers = fix_tiers(options.policies)
    new = Counter(f.rule_id for f in report.new_findings())
    existing = Counter(f.rule_id for f in report.findings) - new
    fixed = Counter(f.rule_id for f in d.fixed)
    titles = {f.rule_id: f.title for f in [*d.fixed, *report.findings]}
    width = max([len("policy"), *map(len, titles)])
    errors = (len(report.new_errors()), len(report.errors) - len(report.new_errors()), "")
    columns = [(name, max(len(name), *(len(str(n)) for n in (*counts.values(), error))))
               for name, counts, error in zip(("new", "existing", "fixed"), (new, existing, fixed), errors,
                                              strict=True)]
    order = sorted(titles, key=lambda pid: (-new[pid], -existing[pid], -fixed[pid], pid))

    def counted(values: tuple[object, ...]) -> str:
        return "  ".join(f"{v!s:>{w}}" for v, (_, w) in zip(values, columns, strict=True))

    lines = [f"{'  '.join(f'{name:>{w}}' for name, w in columns)}  {'policy':<{width}}       title"]
    lines += [f"{counted((new[pid], existing[pid], fixed[pid]))}  {pid:<{width}}  "
              f"{'[*]' if tiers.get(pid) == 'safe' else '   '}  {titles[pid]}" for pid in order]
    if report.errors:
        lines.append(f"{counted(errors)}  input error(s)")
    return "\n".join(line.rstrip() for line in lines) + "\n"
