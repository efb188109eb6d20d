"""Inline SVG charts for the HTML report: horizontal bars and a stacked severity bar. Plain markup,
no script, no external font or stylesheet: the file renders the same offline."""

from __future__ import annotations

from html import escape

COLORS = {"error": "#c62828", "warning": "#ef8f00", "info": "#1565c0", "bar": "#5e35b1"}


LABEL_CHARS = 80  # a label longer than this keeps its end (file names differ there), with a leading `…`


def bars(rows: list[tuple[str, int]], color: str = COLORS["bar"], title: str = "", width: int = 640) -> str:
    """One labelled bar per row, scaled to the largest value; the value is written at the bar's end. Each
    label has the chart's whole width on a line of its own above its bar, so no label is cut off."""
    if not rows:
        return ""
    row_h, most = 34, max(v for _, v in rows) or 1
    height = row_h * len(rows) + 4
    out = [f'<svg class="chart" role="img" aria-label="{escape(title)}" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">', f"<title>{escape(title)}</title>"]
    span = width - 50
    for i, (label, value) in enumerate(rows):
        y = i * row_h + 2
        w = max(1, round(span * value / most)) if value else 0
        shown = label if len(label) <= LABEL_CHARS else "…" + label[-(LABEL_CHARS - 1):]
        out.append(f'<text x="0" y="{y + 12}" font-size="12">{escape(shown)}</text>')
        out.append(f'<rect x="0" y="{y + 16}" width="{w}" height="12" fill="{color}"/>')
        out.append(f'<text x="{w + 4}" y="{y + 27}" font-size="12">{value}</text>')
    out.append("</svg>")
    return "".join(out)


def stacked(counts: dict[str, int], title: str, width: int = 640) -> str:
    """One bar split by severity (error, warning, info), with a legend underneath."""
    total = sum(counts.values())
    out = [f'<svg class="chart" role="img" aria-label="{escape(title)}" width="{width}" height="46" '
           f'viewBox="0 0 {width} 46" xmlns="http://www.w3.org/2000/svg">', f"<title>{escape(title)}</title>"]
    x = 0.0
    for sev in ("error", "warning", "info"):
        w = width * counts.get(sev, 0) / total if total else 0
        if w:
            out.append(f'<rect x="{x:.1f}" y="0" width="{w:.1f}" height="20" fill="{COLORS[sev]}"/>')
        x += w
    for i, sev in enumerate(("error", "warning", "info")):
        lx = i * 160
        out.append(f'<rect x="{lx}" y="28" width="12" height="12" fill="{COLORS[sev]}"/>')
        out.append(f'<text x="{lx + 16}" y="39" font-size="12">{sev}: {counts.get(sev, 0)}</text>')
    out.append("</svg>")
    return "".join(out)
