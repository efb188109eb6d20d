"""`--format html`: an upgrade-readiness report in one self-contained file (inline CSS and SVG, no
script, nothing fetched when it is opened; links only to GitLab's documentation and sunset's own).

Sections: the summary, a legend, per target release (what is removed there and how many projects break
by then), the policies found (each with its fix, GitLab's documentation and sunset's page, and whether
`sunset fix` rewrites it), the shared files with the largest blast radius (instance scans), one row per
project (per file for a checkout scan) with its readiness, the findings under the file they are written
in, the input errors. Every number is in an element with a `data-k` name, so tests compare it with the
JSON. With `--diff-base`: what the findings were compared with and how many are new, already there and
fixed; each finding row says `new` or `existing` (`data-change`), new ones marked; the fixed ones listed.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from html import escape
from typing import TYPE_CHECKING

from scanner import __version__
from scanner.core.results import Finding, Report
from scanner.core.versions import Version
from scanner.report import svg
from scanner.report.options import fix_tiers
from scanner.report.projects import by_file, project_findings, shared_files

if TYPE_CHECKING:
    from scanner.report.options import RenderOptions

TOP = 15
# sunset's own documentation (pyproject.toml's Homepage; tests/test_html_report.py holds them equal)
PROJECT = "https://gitlab.com/gitlab-sunset/gitlab-sunset"
DOCS = f"{PROJECT}/-/blob/main/docs"
MARKS = {"safe": "[*]", "unsafe": "(*)"}
FIX_SENTENCE = (
    "<b>[*]</b> <code>sunset fix</code> rewrites these findings in place: only the deprecated text changes "
    "(a key or variable renamed, a removed setting deleted, a template replaced), every other byte of the "
    "file stays, and the file is checked to still parse as intended. <b>(*)</b> <code>sunset fix --unsafe</code> "
    "rewrites them too, for a person to review (the old and new forms differ in behaviour). "
    f'<a href="{DOCS}/fix.md">What each fix rewrites</a>.')
# The browser itself refuses anything but the inline style (a stray fetch is a CSP error in its console).
CSP = ("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
       "img-src data:\">")
CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:1100px;color:#222;
padding:0 1rem}h1{font-size:1.6rem}h2{margin-top:2.2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
table{border-collapse:collapse;width:100%;margin:.6rem 0}th,td{text-align:left;padding:.3rem .5rem;
border-bottom:1px solid #eee;vertical-align:top}th{background:#f6f6f8}td.n,th.n{text-align:right}
.cards{display:flex;flex-wrap:wrap;gap:.8rem}.card{border:1px solid #ddd;border-radius:6px;padding:.6rem 1rem;
min-width:8rem}.card b{display:block;font-size:1.5rem}.sev{border-radius:3px;padding:0 .35rem;color:#fff}
.error{background:#c62828}.warning{background:#ef8f00}.info{background:#1565c0}code{font-size:12px}
details summary{cursor:pointer}.muted{color:#666}.chart{display:block;margin:.5rem 0}.fix{font-weight:bold}
.new{border:1px solid #c62828;color:#c62828;border-radius:3px;padding:0 .3rem;font-size:12px;font-weight:bold}
"""


@dataclass(slots=True)
class Unit:
    """A row of the per-project table: a project (instance scan) or a file (checkout scan)."""

    name: str
    status: str  # the project's record (`scanned`, `no CI/CD configuration`, …); `scanned` for a file
    findings: list[Finding]
    problems: int = 0  # input errors in its own files (an include that could not be read: readiness unknown)

    def breaks_at(self) -> Version | None:
        removed = [Version.parse(f.removed_in) for f in self.findings if f.removed_in]
        return min(removed) if removed else None

    def readiness(self, target: Version) -> str:
        """What the row means for the upgrade: it breaks on the target, it is ready but has deprecations
        to plan for, it is ready, or sunset could not tell (input errors; not scanned, and why)."""
        if self.status != "scanned":
            return f"not scanned: {self.status}"
        if any(f.severity == "error" for f in self.findings):
            return f"breaks on {target}"
        if self.problems:
            return "unknown: some files could not be read"
        if any(f.severity == "warning" for f in self.findings):
            return "ready; deprecations to plan for"
        return "ready"


def units(report: Report) -> list[Unit]:
    files = by_file(report)
    if report.projects:
        problems = Counter(e.path.partition("@")[0] for e in report.errors)
        return [Unit(p.project, p.status, project_findings(report, p, files), problems[p.project])
                for p in report.projects]
    return [Unit(path, "scanned", found) for path, found in sorted(files.items())]


def _n(key: str, value: object, cls: str = "n") -> str:
    return f'<td class="{cls}" data-k="{key}">{value}</td>'


def _sev(s: str) -> str:
    return f'<span class="sev {s}">{s}</span>'


def _summary(report: Report, rows: list[Unit], target: Version, noun: str) -> str:
    counts = report.severity_counts()
    breaking = sum(1 for u in rows if (b := u.breaks_at()) is not None and b <= target)
    cards = [("projects" if noun == "project" else "files with findings", len(rows), "units"),
             (f"{noun}s that break at {target}", breaking, "breaking"),
             ("findings", len(report.findings), "findings"), ("errors (break)", counts["error"], "error"),
             ("warnings", counts["warning"], "warning"), ("info", counts["info"], "info"),
             ("files scanned", report.files_scanned, "files"), ("input errors", len(report.errors), "input-errors")]
    if report.diff is not None:
        new = len(report.new_findings())
        cards[2:2] = [("new", new, "new"), ("already there", len(report.findings) - new, "existing"),
                      ("fixed", len(report.diff.fixed), "fixed")]
    html = "".join(f'<div class="card"><b data-k="{k}">{v}</b>{escape(label)}</div>' for label, v, k in cards)
    return _compared(report) + f'<div class="cards">{html}</div>' + svg.stacked(counts, "findings by severity")


def _compared(report: Report) -> str:
    """`--diff-base`: what the findings were compared with."""
    d = report.diff
    if d is None:
        return ""
    how = f"the merge base <code>{escape(d.commit[:12])}</code>" if not d.note else escape(d.note)
    return (f'<p id="compared">Compared with <code>{escape(d.base)}</code> ({how}): findings marked '
            f'<span class="new">new</span> are what the change adds; the others were already there.</p>')


LEGEND = """<h2>Legend</h2><ul>
<li>{error} removed at or before the target release: it breaks on this upgrade.</li>
<li>{warning} deprecated, removed in a later release or not yet scheduled.</li>
<li>{info} informational (for example, projects a job reaches with its CI job token).</li>
<li><b>breaks at</b>: the earliest release that removes something the {noun} uses.
A {noun} reaches every file its pipeline includes; a shared file's findings are listed once, under the file.</li>
<li><b>readiness for {target}</b>: <i>breaks on {target}</i> (something it uses is removed by then),
<i>ready; deprecations to plan for</i> (removed later), <i>ready</i>, <i>unknown</i> (a file it reaches could
not be read), or <i>not scanned</i> and why.</li>
<li><b>[*]</b> <code>sunset fix</code> rewrites it; <b>(*)</b> <code>sunset fix --unsafe</code> does, for review.</li>
</ul>"""


def _releases(report: Report, rows: list[Unit], noun: str) -> str:
    removed: dict[Version, list[Finding]] = defaultdict(list)
    for f in report.findings:
        if f.removed_in:
            removed[Version.parse(f.removed_in)].append(f)
    if not removed:
        return "<h2>Per target release</h2><p>No finding names a release that removes it.</p>"
    first = Counter(b for u in rows if (b := u.breaks_at()) is not None)
    body, chart, total = [], [], 0
    for release in sorted(removed):
        total += first[release]
        why = Counter(f.rule_id for f in removed[release]).most_common(3)
        body.append(f"<tr><td>{release}</td>{_n('removed', len(removed[release]))}{_n('first', first[release])}"
                    f"{_n('by-then', total)}<td>{', '.join(f'<code>{escape(p)}</code>' for p, _ in why)}</td></tr>")
        chart.append((f"{release}", total))
    head = (f"<tr><th>release</th><th class=n>findings removed there</th><th class=n>{noun}s first breaking"
            f"</th><th class=n>{noun}s broken by then</th><th>mostly because of</th></tr>")
    return (f"<h2>Per target release</h2>{svg.bars(chart, title=f'{noun}s broken by release')}"
            f'<table id="releases">{head}{"".join(body)}</table>')


def prose(text: str) -> str:
    """Policy prose escaped, with its `code spans` set as code."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", escape(text))


def _policy_link(pid: str) -> str:
    return f'<a href="{escape(DOCS)}/policies/{escape(pid)}.md"><code>{escape(pid)}</code></a>'


def _policies(report: Report, rows: list[Unit], noun: str, tiers: dict[str, str]) -> str:
    """Every policy found, widest reach first: its fix, whether `sunset fix` rewrites it, GitLab's page."""
    count = Counter(f.rule_id for f in report.findings)
    reach = Counter(p for u in rows for p in {f.rule_id for f in u.findings})
    first: dict[str, Finding] = {}
    for f in report.findings:  # a policy's first finding speaks for it (its fix, filled in for that place)
        first.setdefault(f.rule_id, f)
    found = sorted(count, key=lambda p: (-reach[p], -count[p], p))
    if not found:
        return ""
    body = []
    for p in found:
        f, mark = first[p], MARKS.get(tiers.get(p, ""), "")
        fix = f'<span class="fix" title="sunset fix">{mark}</span> ' if mark else ""
        body.append(f'<tr data-policy="{escape(p)}"><td>{_policy_link(p)}</td><td>{prose(f.title)}</td>'
                    f"<td>{escape(f.removed_in or '—')}</td>{_n('findings', count[p])}{_n('reach', reach[p])}"
                    f"<td>{fix}{escape(f.replacement or '—')}</td>"
                    f'<td><a href="{escape(f.docs_url)}">GitLab docs</a></td></tr>')
    chart = svg.bars([(p, reach[p]) for p in found[:TOP]], title=f"{noun}s per policy")
    return (f"<h2>Policies found</h2>{chart}"
            f'<table id="policies"><tr><th>policy</th><th>title</th><th>removed in</th><th class=n>findings</th>'
            f"<th class=n>{noun}s</th><th>fix</th><th>GitLab</th></tr>{''.join(body)}</table>"
            f"<p class=muted>{FIX_SENTENCE}</p>")


def _blast(report: Report) -> str:
    shared = [s for s in shared_files(report) if s.findings][:TOP]
    if not shared:
        return ""
    body = []
    for s in shared:
        names = sorted({name for name, _, _ in s.projects})
        more = f" … and {len(names) - 20} more" if len(names) > 20 else ""
        listed = ", ".join(escape(n) for n in names[:20]) + more
        body.append(f'<tr data-file="{escape(s.path)}"><td><code>{escape(s.path)}</code></td>'
                    f"{_n('projects', len(names))}{_n('findings', len(s.findings))}"
                    f"<td><details><summary>projects</summary>{listed}</details></td></tr>")
    chart = svg.bars([(s.path, len({n for n, _, _ in s.projects})) for s in shared], title="projects per shared file")
    return (f"<h2>Shared files with the largest blast radius</h2><p>Fixing one of these fixes every project "
            f"listed.</p>{chart}<table id=\"blast\"><tr><th>file</th><th class=n>projects</th><th class=n>findings"
            f"</th><th>who includes it</th></tr>{''.join(body)}</table>")


def _units(rows: list[Unit], noun: str, target: Version) -> str:
    body = []
    for u in sorted(rows, key=lambda u: (u.breaks_at() or Version.parse("999.0"), -len(u.findings), u.name)):
        c = Counter(f.severity for f in u.findings)
        b = u.breaks_at()
        policies = ", ".join(sorted({f.rule_id for f in u.findings}))
        body.append(f'<tr data-unit="{escape(u.name)}"><td>{escape(u.name)}</td>'
                    f'<td data-status="{escape(u.readiness(target))}">{escape(u.readiness(target))}</td>'
                    f"<td>{'' if b is None else (_sev('error') + ' ' if b <= target else '') + str(b)}</td>"
                    f"{_n('error', c['error'])}{_n('warning', c['warning'])}{_n('info', c['info'])}"
                    f"{_n('problems', u.problems)}<td class=muted>{escape(policies)}</td></tr>")
    return (f'<h2>Per {noun}</h2><table id="units"><tr><th>{noun}</th><th>readiness for {target}</th><th>breaks at</th>'
            f"<th class=n>errors</th><th class=n>warnings</th><th class=n>info</th><th class=n>input errors</th>"
            f"<th>policies</th></tr>"
            f"{''.join(body)}</table>")


def _row(f: Finding, tiers: dict[str, str], attrs: str = "", first: str = "") -> str:
    """A finding's row; `attrs` of the row, `first` cells before its own; `data-change="new"` marks it new."""
    marker = ' <span class="new">new</span>' if 'data-change="new"' in attrs else ""
    return (f"<tr{attrs}>{first}<td class=n>{f.location.line}:{f.location.column}{marker}</td>"
            f"<td>{_sev(f.severity)}</td>"
            f'<td><a href="{escape(f.docs_url)}"><code>{escape(f.rule_id)}</code></a> '
            f'<span class="fix">{MARKS.get(tiers.get(f.rule_id, ""), "")}</span></td>'
            f"<td>{escape(f.removed_in or '—')}</td><td>{prose(f.message)}"
            f"{'<br><b>Fix:</b> ' + escape(f.replacement) if f.replacement else ''}</td></tr>")


def _findings(report: Report, tiers: dict[str, str]) -> str:
    d = report.diff
    parts = []
    for path, found in sorted(by_file(report).items()):
        rows = "".join(_row(f, tiers, "" if d is None else f' data-change="{"new" if d.is_new(f) else "existing"}"')
                       for f in found)
        new = f", {sum(d.is_new(f) for f in found)} new" if d is not None else ""
        parts.append(f"<details><summary><code>{escape(path)}</code> — {len(found)}{new}</summary><table>{rows}"
                     f"</table></details>")
    return "<h2>Findings by file</h2>" + "".join(parts) if parts else ""


def _fixed(report: Report, tiers: dict[str, str]) -> str:
    """`--diff-base`: the findings of the base that are gone, where they were at the base."""
    if report.diff is None or not report.diff.fixed:
        return ""
    rows = "".join(_row(f, tiers, f' data-fixed="{escape(f.location.path)}"',
                        f"<td><code>{escape(f.location.path)}</code></td>") for f in report.diff.fixed)
    return (f"<h2>Fixed since {escape(report.diff.base)}</h2><p class=muted>At the base, gone now (lines as they "
            f'were at the base).</p><table id="fixed">{rows}</table>')


def _errors(report: Report) -> str:
    if not report.errors:
        return ""
    rows = "".join(f"<tr><td><code>{escape(e.path)}</code></td><td class=n>{e.line or ''}</td>"
                   f"<td>{escape(e.message)}</td></tr>" for e in report.errors)
    return f'<h2>Input errors</h2><table id="errors"><tr><th>file</th><th>line</th><th>problem</th></tr>{rows}</table>'


def _upgrade(report: Report) -> str:
    """`--from`: GitLab's required stops on the way to the target and what takes effect at each."""
    if not report.upgrade:
        return ""
    rows = "".join(
        f"<tr><td>{escape(s.release)}</td>"
        f"<td>{'conditional stop' if s.conditional else 'required stop' if s.required else 'target'}</td>"
        f"<td>{len(s.findings)}</td>"
        f"<td>{escape(', '.join(sorted({report.findings[i].rule_id for i in s.findings})))}</td></tr>"
        for s in report.upgrade)
    return (f"<h2>Upgrade from GitLab {escape(report.current or '')}, stop by stop</h2><table id=\"upgrade\">"
            f"<tr><th>release</th><th>step</th><th>findings</th><th>policies</th></tr>{rows}</table>")


def render(report: Report, options: RenderOptions) -> str:
    target = Version.parse(report.target)
    noun = "project" if report.projects else "file"
    rows = units(report)
    tiers = fix_tiers(options.policies)
    sections = [_summary(report, rows, target, noun), _upgrade(report),
                LEGEND.format(error=_sev("error"), warning=_sev("warning"), info=_sev("info"), noun=noun,
                              target=target),
                _releases(report, rows, noun), _policies(report, rows, noun, tiers), _blast(report),
                _units(rows, noun, target), _findings(report, tiers), _fixed(report, tiers), _errors(report)]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">" + CSP +
            f"<title>sunset: upgrade readiness for GitLab {target}</title><style>{CSS}</style></head><body>"
            f"<h1>Upgrade readiness for GitLab {target}</h1><p class=muted>sunset {__version__}</p>"
            + "".join(sections) + "</body></html>\n")
