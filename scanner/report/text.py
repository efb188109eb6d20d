"""The terminal format: `path:line:col: severity[policy] [*] message`, the source line with a caret
(clipped around the column to the width), the fix; a policy's history note once, under its first finding.
`[*]`: `sunset fix` rewrites it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scanner.core.redact import visible
from scanner.core.results import Finding, Report

if TYPE_CHECKING:
    from scanner.report.options import RenderOptions

_COLORS = {"error": "31", "warning": "33", "info": "36", "dim": "2", "bold": "1"}


class _Paint:
    """Four lines of escape codes instead of a colour library: importing rich.console costs 67-99 ms
    (`-X importtime`, 2026-11-25, load average 5) against a start-up of about 0.19 s."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, style: str, text: str) -> str:
        return f"\033[{_COLORS[style]}m{text}\033[0m" if self.enabled else text


def clip(line: str, column: int, width: int, room: int) -> tuple[str, int, int]:
    """`line` cut to `room` characters around the 1-based `column` (`…` where it was cut), with the
    column and caret width moved to match. Unchanged when it fits or `room` is 0."""
    if room <= 0 or len(line) <= room:
        return line, column, width
    start = max(0, min(column - 1 - room // 3, len(line) - room))
    text = line[start : start + room]
    if start > 0:
        text = "…" + text[1:]
    if start + room < len(line):
        text = text[:-1] + "…"
    column -= start
    return text, column, max(1, min(width, room - column))


def _finding(f: Finding, paint: _Paint, marker: str, note: tuple[str, bool], room: int) -> list[str]:
    """`note`: the policy's history sentence (left out of the message) and whether to show it here."""
    loc = f.location
    where = f"{visible(loc.path)}:{loc.line}:{loc.column}"
    sentence, show = note
    message = f.message.replace(f" {sentence}", "", 1) if sentence else f.message
    head = f"{where}: {paint(f.severity, f.severity)}[{f.rule_id}]{marker} {visible(message)}"
    out = [paint("bold", head) if paint.enabled else head]
    if loc.snippet:
        gutter = f"{loc.line:>5} | "
        raw = loc.snippet.replace("	", " ")
        start, end = loc.snippet_span()  # in the redacted snippet
        line = visible(raw)
        before = len(visible(raw[: start - 1]))  # escapes widen what precedes the caret
        width = len(visible(raw[start - 1 : end - 1])) if end is not None else len(line) - before
        line, column, width = clip(line, before + 1, width, room - len(gutter) if room else 0)
        caret = " " * (column - 1) + "^" * max(1, width)
        out.append(paint("dim", gutter) + line)
        out.append(paint("dim", " " * (len(gutter) - 2) + "| ") + paint(f.severity, caret))
    pad = " " * 6
    if f.replacement:
        out.append(f"{pad}= fix: {visible(f.replacement)}")
    out.append(f"{pad}= docs: {f.docs_url}")
    if f.local:
        out.append(f"{pad}= origin: {visible(f.origin)} (a local policy, not one of GitLab's)")
    if sentence and show:
        out.append(f"{pad}= note: {visible(sentence)}")
    return out


def summary(report: Report, tiers: dict[str, str]) -> str:
    counts = report.severity_counts()
    safe = sum(tiers.get(f.rule_id) == "safe" for f in report.findings)
    unsafe = sum(tiers.get(f.rule_id) == "unsafe" for f in report.findings)
    fixable = [f"{safe} fixable with `sunset fix` [*]"] if safe else []
    fixable += [f"{unsafe} with `sunset fix --unsafe`"] if unsafe else []
    return (
        f"Scanned {report.files_scanned} file{'s' if report.files_scanned != 1 else ''} "
        f"for GitLab {report.target}: {counts['error']} error(s), {counts['warning']} warning(s), "
        f"{counts['info']} info; {len(report.errors)} input error(s); "
        f"{report.suppressed} suppressed, {report.baselined} baselined."
        + (f" {', '.join(fixable)}." if fixable else "") + (diff_summary(report) if report.diff else "")
    )


def diff_summary(report: Report) -> str:
    """` Against main (merge base 1a2b3c4d5e6f): 1 new (1 error), listed; 68 already there (60 errors,
    8 warnings), not listed; 2 fixed.` — new and existing counted apart, as the exit status counts new ones."""
    d = report.diff
    assert d is not None
    new = report.new_findings()
    fresh = {id(f) for f in new}
    existing = [f for f in report.findings if id(f) not in fresh]
    base = f"{visible(d.base)} (merge base {d.commit[:12]})" if not d.note else f"{visible(d.base)} ({d.note})"
    errors = f"; {len(report.new_errors())} of {len(report.errors)} input error(s) new" if report.errors else ""
    return (f" Against {base}: {len(new)} new{_by_severity(new)}, listed; {len(existing)} already there"
            f"{_by_severity(existing)}{', not listed' if existing else ''}; {len(d.fixed)} fixed{errors}.")


def _by_severity(findings: list[Finding]) -> str:
    """` (1 error, 2 warnings)`; nothing for no findings."""
    counts = {s: sum(f.severity == s for f in findings) for s in ("error", "warning", "info")}
    parts = [f"{n} {s}{'s' if n != 1 and s != 'info' else ''}" for s, n in counts.items() if n]
    return f" ({', '.join(parts)})" if parts else ""


def render(report: Report, options: RenderOptions) -> str:
    from scanner.report.options import fix_tiers

    color = options.color
    paint = _Paint(color)
    tiers = fix_tiers(options.policies)
    notes = {p.id: p.history_note() for p in options.policies if p.data.history}
    shown: set[str] = set()
    lines: list[str] = []
    for f in report.new_findings():  # with `--diff-base`, what the change adds; `summary` counts the rest
        marker = " [*]" if tiers.get(f.rule_id) == "safe" else ""
        note = (notes.get(f.rule_id, ""), f.rule_id not in shown)
        shown.add(f.rule_id)
        lines.extend(_finding(f, paint, marker, note, options.width))
        lines.append("")
    if report.errors:
        lines.append(paint("bold", "Input errors:") if color else "Input errors:")
        for e in report.errors:
            where = f"{e.path}:{e.line}" if e.line else e.path
            lines.append(f"  {visible(where)}: {visible(e.message)}")
        lines.append("")
    if report.warnings:
        lines.append(paint("bold", "Warnings:") if color else "Warnings:")
        lines.extend(f"  {visible(w.path)}:{w.line}: {visible(w.message)}" for w in report.warnings)
        lines.append("")
    if report.upgrade:
        lines += [*upgrade_lines(report), ""]
    lines.append(summary(report, tiers))
    return "\n".join(lines) + "\n"


def upgrade_lines(report: Report) -> list[str]:
    """`--from`: GitLab's required stops on the way to the target and what breaks at each."""
    from scanner.core.upgrade import past_known_stops
    from scanner.core.versions import Version

    lines = [f"Upgrade from GitLab {report.current} to {report.target}, stop by stop:"]
    for step in report.upgrade:
        kind = "target" if not step.required and not step.conditional else (
            "conditional stop" if step.conditional else "required stop")
        ids = sorted({report.findings[i].rule_id for i in step.findings})
        n = len(step.findings)
        what = (f"{n} finding{'s take' if n != 1 else ' takes'} effect: {', '.join(ids)}" if ids
                else "nothing found here takes effect")
        lines.append(f"  {step.release:>6}  {kind}: {what}")
    if last := past_known_stops(Version.parse(report.target)):
        lines.append(f"  GitLab lists required stops up to {last}; the stops after it are not known yet.")
    return lines
