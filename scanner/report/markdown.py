"""The merge-request comment body, rendered from the JSON contract so a saved report is enough.

`sunset comment --report FILE` reads the report a scan job wrote and renders it here; nothing in
this module needs the scan, the policies or the network. The body starts with `MARKER`, a hidden
HTML comment the comment command uses (with the note's author) to find its own note again.

Everything that comes from the scanned repository — paths, matched values inside messages,
snippets — is treated as hostile markdown: it goes into code spans or fenced blocks, or is escaped
with backslashes. GitLab (since 14.0) does not turn escaped `@`, `#`, `!`, `~`, `%`, `$`, `&` into
mentions or references, so a YAML key named `@team` pings nobody.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from scanner.core.versions import Version

if TYPE_CHECKING:
    from scanner.core.results import Report
    from scanner.report.options import RenderOptions

MARKER = "<!-- sunset:report -->"
# GitLab refuses notes over 1,000,000 characters; a comment a tenth of that is already too long to
# read, so the table is cut at this size and points at the full report instead.
MAX_CHARS = 100_000
FIELD_CHARS = 400  # one message, title or snippet line
MAX_ERRORS = 50
_RANK = {"error": 0, "warning": 1, "info": 2}
_PROSE_SPECIAL = re.compile(r"([\\`*_\[\]{}()<>#!|~@$%&^])")
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_URL_SAFE = ":/?#[]@!$&'*+,;=%~"
_FENCE_LANG = (((".yml", ".yaml"), "yaml"), ((".sh", ".bash"), "shell"))

Json = Mapping[str, Any]


def _oneline(text: str, limit: int = FIELD_CHARS) -> str:
    flat = " ".join(str(text).split()) if "\n" in str(text) or "\r" in str(text) else str(text)
    flat = "".join(ch if ch.isprintable() else " " for ch in flat)
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _prose(text: str) -> str:
    return _PROSE_SPECIAL.sub(r"\\\1", text)


def _code(text: str, table: bool = False) -> str:
    text = _oneline(text)
    if not text:
        return ""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text[0] == "`" or text[-1] == "`" or (text[0] == " " and text[-1] == " ") else ""
    body = text.replace("|", "\\|") if table else text
    return f"{fence}{pad}{body}{pad}{fence}"


def inline(text: str, table: bool = False) -> str:
    """Policy prose with `code` spans kept; everything else escaped."""
    parts = _CODE_SPAN.split(_oneline(text))
    return "".join(_code(p, table) if i % 2 else _prose(p) for i, p in enumerate(parts))


def _url(url: str) -> str:
    return quote(url, safe=_URL_SAFE)


def file_url(env: Mapping[str, str], path: str, line: int) -> str | None:
    """The file and line in the merge request's source branch, when CI says where that is."""
    project = env.get("CI_MERGE_REQUEST_SOURCE_PROJECT_URL") or env.get("CI_PROJECT_URL")
    sha = env.get("CI_MERGE_REQUEST_SOURCE_BRANCH_SHA") or env.get("CI_COMMIT_SHA")
    if not project or not sha:
        return None
    return f"{_url(project.rstrip('/'))}/-/blob/{quote(sha, safe='')}/{quote(path, safe='/')}#L{int(line)}"


def _where(f: Json, env: Mapping[str, str], table: bool) -> str:
    text = _code(f"{f['path']}:{f['line']}", table)
    url = file_url(env, f["path"], f["line"])
    return f"[{text}]({url})" if url else text


def _release_key(removed: str | None) -> tuple[int, Version]:
    if removed is None:
        return (1, Version(0, 0))
    try:
        return (0, Version.parse(removed))
    except ValueError:
        return (1, Version(0, 0))


def _order(f: Json) -> tuple[Any, ...]:
    return (_release_key(f.get("removed_in")), _RANK.get(f["severity"], 3), f["path"], f["line"], f["column"])


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else plural or word + 's'}"


def _headline(report: Json) -> str:
    findings, target = report["findings"], report["target"]
    breaking = sum(1 for f in findings if f["severity"] == "error")
    if breaking:
        verb = "breaks" if breaking == 1 else "break"
        return f"### sunset: {_plural(breaking, 'finding')} {verb} on GitLab {target}"
    if findings:
        return f"### sunset: nothing breaks on GitLab {target}; {_plural(len(findings), 'deprecation')} to plan for"
    return f"### sunset: {_plural(len(report['errors']), 'input error')}; some files were not checked"


def _left_out(summary: Json) -> str:
    """`2 suppressed inline and 5 in the baseline`, or '' when nothing was left out."""
    labels = (("suppressed", "suppressed inline"), ("baselined", "in the baseline"))
    return " and ".join(f"{summary[key]} {label}" for key, label in labels if summary.get(key))


def _summary(report: Json) -> str:
    s = report["summary"]
    by = s.get("by_severity", {})
    text = (
        f"Scanned {_plural(s['files_scanned'], 'file')} for GitLab {report['target']}: "
        f"{_plural(s['findings'], 'finding')} ({by.get('error', 0)} error, {by.get('warning', 0)} warning, "
        f"{by.get('info', 0)} info)"
    )
    left_out = _left_out(s)
    return text + "." + (f" Not shown: {left_out}." if left_out else "")


def _group_key(f: Json) -> str | None:
    """The effective removal release; a canceled or withdrawn removal is a group of its own."""
    removal = f.get("removal")
    canceled = isinstance(removal, dict) and removal.get("status") in ("canceled", "withdrawn")
    return CANCELED if canceled else f.get("removed_in")


CANCELED = "canceled"


def _group_title(removed: str | None, count: int) -> str:
    if removed == CANCELED:
        what = "Removal canceled or withdrawn by GitLab"
    else:
        what = f"Removed in GitLab {_prose(removed)}" if removed else "Removal not scheduled"
    return f"#### {what} ({count})"


def _row(f: Json, env: Mapping[str, str]) -> str:
    policy = f"[{_code(f['rule_id'], True)}]({_url(f['docs_url'])})" if f.get("docs_url") else _code(f["rule_id"], True)
    return f"| {f['severity']} | {_where(f, env, True)} | {policy} {inline(f['title'], True)} |"


def _detail(f: Json, env: Mapping[str, str]) -> str:
    lines = [f"**{_where(f, env, False)}** · {_code(f['rule_id'])}<br>{inline(f['message'])}"]
    if f.get("replacement"):
        lines[0] += f"<br>**Fix:** {inline(f['replacement'])}"
    snippet = _oneline(f.get("snippet") or "")
    if snippet.strip():
        fence = "`" * max(3, 1 + max((len(r) for r in re.findall(r"`+", snippet)), default=0))
        lang = next((name for suffixes, name in _FENCE_LANG if f["path"].endswith(suffixes)), "")
        lines.append(f"{fence}{lang}\n{snippet}\n{fence}")
    return "\n\n".join(lines)


def _group(removed: str | None, findings: list[Json], env: Mapping[str, str]) -> str:
    rows = "\n".join(_row(f, env) for f in findings)
    details = "\n\n".join(_detail(f, env) for f in findings)
    return (
        f"{_group_title(removed, len(findings))}\n\n| Severity | Where | Policy |\n| --- | --- | --- |\n{rows}\n\n"
        f"<details><summary>Details and fixes</summary>\n\n{details}\n\n</details>"
    )


def _errors(errors: list[Json]) -> str:
    items = [
        f"- {_code(e['path'] + (':' + str(e['line']) if e.get('line') else ''))}: {_prose(_oneline(e['message']))}"
        for e in errors[:MAX_ERRORS]
    ]
    if len(errors) > MAX_ERRORS:
        items.append(f"- … and {len(errors) - MAX_ERRORS} more")
    return f"#### Not checked ({len(errors)})\n\n" + "\n".join(items)


def _footer(report: Json, env: Mapping[str, str]) -> str:
    parts = [f"sunset {_prose(str(report.get('tool', {}).get('version', '')))}"]
    if env.get("CI_PIPELINE_URL"):
        label = " ".join(["pipeline", _prose(env.get("CI_PIPELINE_ID", ""))]).strip()
        parts.append(f"[{label}]({_url(env['CI_PIPELINE_URL'])})")
    parts.append("this comment is updated on every pipeline")
    return "<sub>" + " · ".join(parts) + "</sub>"


def _body(report: Json, env: Mapping[str, str], findings: list[Json], shown: int) -> str:
    sections = [MARKER, _headline(report), _summary(report)]
    groups: dict[str | None, list[Json]] = {}
    for f in findings[:shown]:
        groups.setdefault(_group_key(f), []).append(f)
    sections += [_group(removed, items, env) for removed, items in groups.items()]
    if shown < len(findings):
        hidden = len(findings) - shown
        sections.append(f"_{_plural(hidden, 'more finding')} not shown to keep this comment short; "
                        "the job's report artifact has them all._")
    if report["errors"]:
        sections.append(_errors(report["errors"]))
    sections.append(_footer(report, env))
    return "\n\n".join(sections) + "\n"


def all_clear(report: Json, env: Mapping[str, str]) -> str:
    s = report["summary"]
    text = f"No deprecated or removed GitLab features in {_plural(s['files_scanned'], 'scanned file')}."
    left_out = _left_out(s)
    if left_out:
        text += f" Not shown: {left_out}."
    headline = f"### sunset: all clear for GitLab {report['target']}"
    return "\n\n".join([MARKER, headline, text, _footer(report, env)]) + "\n"


def is_clean(report: Json) -> bool:
    return not report["findings"] and not report["errors"]


def render(report: Report, options: RenderOptions) -> str:
    """`sunset scan --format markdown`: the scan's JSON contract, rendered as `sunset comment` would."""
    from scanner.report.jsonfmt import report_dict

    return render_json(report_dict(report), options.env)


def render_json(report_json: Json, env: Mapping[str, str], max_chars: int = MAX_CHARS) -> str:
    """The note body; when it would exceed `max_chars`, the most findings that fit, and a note."""
    if is_clean(report_json):
        return all_clear(report_json, env)
    findings = sorted(report_json["findings"], key=_order)
    body = _body(report_json, env, findings, len(findings))
    if len(body) <= max_chars:
        return body
    low, high = 0, len(findings) - 1  # the largest count that fits, by bisection (bodies grow with count)
    while low < high:
        mid = (low + high + 1) // 2
        if len(_body(report_json, env, findings, mid)) <= max_chars:
            low = mid
        else:
            high = mid - 1
    return _body(report_json, env, findings, low)
