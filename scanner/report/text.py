"""The terminal format: `path:line:col: severity[policy] message`, the source line with a caret, the fix."""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING

from scanner.core.results import Finding, Report

if TYPE_CHECKING:
    from scanner.report.options import RenderOptions

_COLORS = {"error": "31", "warning": "33", "info": "36", "dim": "2", "bold": "1"}


def visible(text: str) -> str:
    """Control characters (C0, C1, DEL) and format characters (bidi overrides, zero-width) from the
    scanned files shown as escapes (`\\x1b`, `\\u202e`), so they never reach the terminal raw."""
    if text.isprintable():
        return text
    return "".join(
        ch if ch == " " or unicodedata.category(ch) not in ("Cc", "Cf", "Zl", "Zp") else
        (f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}")
        for ch in text
    )


class _Paint:
    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, style: str, text: str) -> str:
        return f"\033[{_COLORS[style]}m{text}\033[0m" if self.enabled else text


def _finding(f: Finding, paint: _Paint) -> list[str]:
    loc = f.location
    where = f"{visible(loc.path)}:{loc.line}:{loc.column}"
    head = f"{where}: {paint(f.severity, f.severity)}[{f.rule_id}] {visible(f.message)}"
    out = [paint("bold", head) if paint.enabled else head]
    if loc.snippet:
        gutter = f"{loc.line:>5} | "
        raw = loc.snippet.replace("\t", " ")
        start, end = loc.snippet_span()
        line = visible(raw)
        before = len(visible(raw[: start - 1]))  # escapes widen what precedes the caret
        width = len(visible(raw[start - 1 : end - 1])) if end is not None else len(line) - before
        caret = " " * before + "^" * max(1, width)
        out.append(paint("dim", gutter) + line)
        out.append(paint("dim", " " * (len(gutter) - 2) + "| ") + paint(f.severity, caret))
    pad = " " * 6
    if f.replacement:
        out.append(f"{pad}= fix: {visible(f.replacement)}")
    out.append(f"{pad}= docs: {f.docs_url}")
    return out


def render(report: Report, options: RenderOptions) -> str:
    color = options.color
    paint = _Paint(color)
    lines: list[str] = []
    for f in report.findings:
        lines.extend(_finding(f, paint))
        lines.append("")
    if report.errors:
        lines.append(paint("bold", "Input errors:") if color else "Input errors:")
        for e in report.errors:
            where = f"{e.path}:{e.line}" if e.line else e.path
            lines.append(f"  {visible(where)}: {visible(e.message)}")
        lines.append("")
    counts = report.severity_counts()
    lines.append(
        f"Scanned {report.files_scanned} file{'s' if report.files_scanned != 1 else ''} "
        f"for GitLab {report.target}: {counts['error']} error(s), {counts['warning']} warning(s), "
        f"{counts['info']} info; {len(report.errors)} input error(s); "
        f"{report.suppressed} suppressed, {report.baselined} baselined."
    )
    return "\n".join(lines) + "\n"
