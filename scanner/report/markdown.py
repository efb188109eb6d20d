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


def file_url(env: Mapping[str, str], path: str, line: int, base: str = "") -> str | None:
    """The file and line in the merge request's source branch, when CI says where that is; with `base`
    (a commit of the target project), at that commit."""
    project: str | None
    sha: str | None
    if base:
        project, sha = env.get("CI_MERGE_REQUEST_PROJECT_URL") or env.get("CI_PROJECT_URL"), base
    else:
        project = env.get("CI_MERGE_REQUEST_SOURCE_PROJECT_URL") or env.get("CI_PROJECT_URL")
        sha = env.get("CI_MERGE_REQUEST_SOURCE_BRANCH_SHA") or env.get("CI_COMMIT_SHA")
    if not project or not sha:
        return None
    return f"{_url(project.rstrip('/'))}/-/blob/{quote(sha, safe='')}/{quote(path, safe='/')}#L{int(line)}"


def _where(f: Json, env: Mapping[str, str], table: bool, base: str = "") -> str:
    text = _code(f"{f['path']}:{f['line']}", table)
    url = file_url(env, f["path"], f["line"], base)
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


def _group_title(removed: str | None, count: int, added: bool = False) -> str:
    if removed == CANCELED:
        what = "removal canceled or withdrawn by GitLab"
    else:
        what = f"removed in GitLab {_prose(removed)}" if removed else "removal not scheduled"
    return f"#### {'Added, ' if added else ''}{what if added else what[0].upper() + what[1:]} ({count})"


def _row(f: Json, env: Mapping[str, str], base: str = "") -> str:
    policy = f"[{_code(f['rule_id'], True)}]({_url(f['docs_url'])})" if f.get("docs_url") else _code(f["rule_id"], True)
    return f"| {f['severity']} | {_where(f, env, True, base)} | {policy} {inline(f['title'], True)} |"


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


def _group(removed: str | None, findings: list[Json], env: Mapping[str, str], added: bool = False) -> str:
    rows = "\n".join(_row(f, env) for f in findings)
    details = "\n\n".join(_detail(f, env) for f in findings)
    return (
        f"{_group_title(removed, len(findings), added)}\n\n| Severity | Where | Policy |\n| --- | --- | --- |\n"
        f"{rows}\n\n"
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
    if "diff" in report:
        d = report["diff"]
        text = (f"This merge request adds no deprecated or removed GitLab feature; compared with {_code(d['base'])}: "
                f"{_plural(len(report['findings']), 'finding')} already there, not listed.")
    left_out = _left_out(s)
    if left_out:
        text += f" Not shown: {left_out}."
    headline = f"### sunset: {'nothing new' if 'diff' in report else 'all clear'} for GitLab {report['target']}"
    return "\n\n".join([MARKER, headline, text, _footer(report, env)]) + "\n"


def is_clean(report: Json) -> bool:
    """Nothing to say: no finding and no input error; with a diff, nothing new and nothing fixed."""
    if "diff" in report:
        return not _new(report["findings"]) and not _new(report["errors"]) and not report["diff"]["fixed"]
    return not report["findings"] and not report["errors"]


def _new(items: list[Json]) -> list[Json]:
    return [i for i in items if i.get("change") != "existing"]


def render(report: Report, options: RenderOptions) -> str:
    """`sunset scan --format markdown`: the scan's JSON contract, rendered as `sunset comment` would."""
    from scanner.report.jsonfmt import report_dict

    return render_json(report_dict(report), options.env)


def render_json(report_json: Json, env: Mapping[str, str], max_chars: int = MAX_CHARS,
                full_report: str | None = None) -> str:
    """The note body; when it would exceed `max_chars`, the most findings that fit, and a note. With a
    `diff` (`sunset scan --diff-base`, `sunset comment --base-report`), what the change adds and fixes;
    `full_report`: where the whole report is, linked from the count of what is not listed."""
    if is_clean(report_json):
        return all_clear(report_json, env)
    if "diff" in report_json:
        findings = sorted(_new(report_json["findings"]), key=_order)
        body = _diff_body(report_json, env, findings, len(findings), full_report)
    else:
        findings = sorted(report_json["findings"], key=_order)
        body = _body(report_json, env, findings, len(findings))
    if len(body) <= max_chars:
        return body
    low, high = 0, len(findings) - 1  # the largest count that fits, by bisection (bodies grow with count)
    while low < high:
        mid = (low + high + 1) // 2
        if len(_shown(report_json, env, findings, mid, full_report)) <= max_chars:
            low = mid
        else:
            high = mid - 1
    return _shown(report_json, env, findings, low, full_report)


def _shown(report: Json, env: Mapping[str, str], findings: list[Json], shown: int, full: str | None) -> str:
    if "diff" in report:
        return _diff_body(report, env, findings, shown, full)
    return _body(report, env, findings, shown)


def _diff_headline(report: Json, new: list[Json], new_errors: int) -> str:
    target, fixed = report["target"], len(report["diff"]["fixed"])
    breaking = sum(1 for f in new if f["severity"] == "error")
    if breaking:
        verb = "breaks" if breaking == 1 else "break"
        return f"### sunset: this merge request adds {_plural(breaking, 'finding')} that {verb} on GitLab {target}"
    if new:
        return (f"### sunset: this merge request adds {_plural(len(new), 'deprecation')} to plan for; nothing it "
                f"adds breaks on GitLab {target}")
    if new_errors:
        return f"### sunset: {_plural(new_errors, 'new input error')}; some files were not checked"
    return f"### sunset: this merge request fixes {_plural(fixed, 'finding')} and adds none"


def _compared(report: Json, new: int, full: str | None) -> str:
    """`Compared with main at 1a2b3c4d5e6f (the merge base): 1 new, 2 fixed, 68 already there (not listed).`"""
    d = report["diff"]
    where = f"{_code(d['base'])} at {_code(d['commit'][:12])}" if d.get("commit") else _code(d["base"])
    how = f" ({_prose(_oneline(d['note']))})" if d.get("note") else " (the merge base)" if d.get("commit") else ""
    existing = len(report["findings"]) - new
    rest = f"{existing} already there" + (f", not listed ([full report]({_url(full)}))" if full and existing else
                                           ", not listed" if existing else "")
    return f"Compared with {where}{how}: **{new} new**, {len(d['fixed'])} fixed, {rest}."


def _fixed(report: Json, env: Mapping[str, str]) -> str:
    fixed = sorted(report["diff"]["fixed"], key=_order)
    base = report["diff"].get("commit", "")
    rows = "\n".join(_row(f, env, base) for f in fixed[:MAX_ERRORS])
    more = f"\n\n_… and {len(fixed) - MAX_ERRORS} more._" if len(fixed) > MAX_ERRORS else ""
    return (f"#### Fixed by this merge request ({len(fixed)})\n\n| Severity | Where (before) | Policy |\n"
            f"| --- | --- | --- |\n{rows}{more}")


def _diff_body(report: Json, env: Mapping[str, str], new: list[Json], shown: int, full: str | None) -> str:
    errors = _new(report["errors"])
    sections = [MARKER, _diff_headline(report, new, len(errors)), _compared(report, len(new), full)]
    groups: dict[str | None, list[Json]] = {}
    for f in new[:shown]:
        groups.setdefault(_group_key(f), []).append(f)
    sections += [_group(removed, items, env, added=True) for removed, items in groups.items()]
    if shown < len(new):
        sections.append(f"_{_plural(len(new) - shown, 'more finding')} not shown to keep this comment short; "
                        "the job's report artifact has them all._")
    if report["diff"]["fixed"]:
        sections.append(_fixed(report, env))
    if errors:
        sections.append(_errors(errors))
    sections.append(_footer(report, env))
    return "\n\n".join(sections) + "\n"
