"""From a finding to span edits: one planner per fix kind, chosen in one explicit dict (`PLANNERS`).

A planner reads the text at the positions the parser recorded and either returns the edits with
what they must do to the parsed data (`Expect`, checked by `scanner.fix.verify`), or says in one
sentence why this finding is left to a person. It never searches the file for the place to edit:
every edit is inside, or right after, the finding's own span.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from scanner.core.results import Route, route_text
from scanner.core.tree import Span
from scanner.fix.sites import Site
from scanner.fix.source import SourceText, exists, refine, unquote, value_at
from scanner.readers import ci
from scanner.rules.fixes import (
    FIX_SPECS,
    AddArgumentFix,
    AnyFix,
    DeleteFix,
    MoveFirstFix,
    RenameFix,
    SetValueFix,
)

Pairs = tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class Edit:
    start: int  # offsets in the document's text; end exclusive
    end: int
    text: str


@dataclass(frozen=True, slots=True)
class Expect:
    """What an edit does to the parsed data: `rename-key` (pairs: the key), `delete`, `move-first`
    (pairs: the key moved) or `in-text` (words of a scalar replaced: pairs old → new)."""

    op: Literal["rename-key", "delete", "move-first", "in-text"]
    route: Route
    pairs: Pairs = ()


@dataclass(frozen=True, slots=True)
class Change:
    site: Site
    spec: AnyFix
    edits: tuple[Edit, ...]
    expects: tuple[Expect, ...]
    summary: str


Planned = tuple[list[Edit], list[Expect], str]  # or a reason (str) when there is no fix here

_WORD = "A-Za-z0-9_-"
# After a name: its closing quote, a separator and a literal (`active=false`, `"active": false`, `== "x"`;
# `:=` is httpie's JSON field).
_AFTER = re.compile(
    r"""(?:\\?["'])?\]?[ \t]*(?P<sep>==|!=|=>|:=|=|:)[ \t]*(?:\\?["'])?(?P<lit>[A-Za-z0-9_+-][A-Za-z0-9_.+-]*)"""
)
_OWN_ENTRY_END = re.compile(r"[ \t]*,?[ \t]*(?:#.*)?\r?")
_STATEMENT = re.compile(r"[ \t]*[A-Za-z_]\w*\[")  # gitlab.rb: `gitlab_rails[` before the key


def _span(site: Site) -> Span:
    return site.hit.span or site.doc.span(site.hit.route, site.hit.part)


def _is_key(site: Site) -> bool:
    return site.hit.part == "key" and site.hit.span is None


def _find_word(text: str, start: int, end: int, word: str) -> int | None:
    """The offset of the only occurrence of `word` as a whole word within [start, end)."""
    found = [m.start() for m in re.finditer(rf"(?<![{_WORD}]){re.escape(word)}(?![{_WORD}])", text[start:end])]
    return start + found[0] if len(found) == 1 else None


def plan_rename(spec: RenameFix, site: Site, src: SourceText) -> Planned | str:
    old = spec.old_name(site.hit.matched) or ""
    new = spec.names[old]
    start, end = src.range(_span(site))
    at = _find_word(src.text, start, end, old)
    if at is None:
        return f"`{old}` is not written as one word at the finding; rename it by hand"
    edits, pairs = [Edit(at, at + len(old), new)], [(old, new)]
    value = _value_edit(spec, src, at + len(old), old)
    if isinstance(value, str):
        return value
    if value is not None:
        edits.append(value)
        pairs.append((src.text[value.start : value.end], value.text))
    if _is_key(site):
        if site.hit.route[-1] != old or len(edits) > 1:
            return f"the key is `{site.hit.route[-1]}`; rename it by hand"
        if new in value_at(site.doc.data.roots, site.hit.route[:-1]):
            return f"`{new}` is already set beside it; remove `{old}` by hand"
        expects = [Expect("rename-key", site.hit.route, ((old, new),))]
    else:
        if (already := _included_already(site, new)) is not None:
            return already
        expects = [Expect("in-text", refine(site.doc, site.hit.route, _span(site)), tuple(pairs))]
    return edits, expects, ", ".join(f"`{a}` → `{b}`" for a, b in pairs)


def _value_edit(spec: RenameFix, src: SourceText, after: int, old: str) -> Edit | str | None:
    """The edit of the literal written after the name, None when there is none to make, or why not."""
    m = _AFTER.match(src.text, after)
    compared = m is not None and m["sep"] in ("==", "!=")
    if spec.value_required and (m is None or compared or m["lit"] not in spec.values):
        wanted = ", ".join(f"`{v}`" for v in spec.values)
        return (
            f"no value ({wanted}) is assigned to `{old}` here (a read, a comparison or a variable); change it by hand"
        )
    table = spec.compared if compared else spec.values
    if m is None or not table:
        return None
    if m["lit"] not in table:
        how = "compared with" if compared else "set to"
        return f"`{old}` is {how} `{m['lit']}`, which has no equivalent; change it by hand"
    return Edit(m.start("lit"), m.end("lit"), table[m["lit"]])


def _included_already(site: Site, new: str) -> str | None:
    """Renaming an include to a template the file already includes would include it twice."""
    if site.doc.kind != "gitlab-ci" or site.hit.route[1:2] != ("include",):
        return None
    if any(e.kind == "template" and e.target == new for e in ci.include_entries(site.doc)):
        return f"`{new}` is already included; delete this include by hand"
    return None


def plan_set_value(spec: SetValueFix, site: Site, src: SourceText) -> Planned | str:
    route = site.hit.route
    value = value_at(site.doc.data.roots, route)
    if not _is_key(site) or not exists(value) or isinstance(value, dict | list):
        return "the value is not written here (a default or a block); set it by hand"
    start, end = src.range(site.doc.span(route, "value"))
    offset, inner = unquote(src.text[start:end])
    if inner not in spec.values:
        return f"the value is `{inner}`, which this fix does not rewrite"
    new = spec.values[inner]
    edit = Edit(start + offset, start + offset + len(inner), new)
    return [edit], [Expect("in-text", route, ((inner, new),))], f"`{inner}` → `{new}`"


def plan_delete(spec: DeleteFix, site: Site, src: SourceText) -> Planned | str:
    route = site.hit.route
    parent = value_at(site.doc.data.roots, route[:-1])
    if not _is_key(site) or not isinstance(parent, dict) or route[-1] not in parent:
        return "only a mapping entry can be deleted; delete it by hand"
    key_start = src.range(site.doc.span(route, "key"))[0]
    start = src.line_start(key_start)
    statement = site.doc.kind == "omnibus-config" and _STATEMENT.fullmatch(src.text[start:key_start]) is not None
    end = _entry_end(src, src.range(site.doc.span(route, "value"))[1])
    if (src.text[start:key_start].strip() and not statement) or end is None:
        return "it shares its lines with other entries (a flow mapping or a one-line hash); delete it by hand"
    if len(parent) < 2 and not statement:
        return f"it is the only entry of `{route_text(route[:-1])}`; deleting it would leave that empty"
    gone = route[:-1] if statement and len(parent) == 1 else route
    return [Edit(start, end, "")], [Expect("delete", gone)], f"deleted `{route[-1]}`"


def _entry_end(src: SourceText, value_end: int) -> int | None:
    """Where an entry whose value ends at `value_end` ends, if nothing else follows on its line."""
    line_start = src.line_start(value_end)
    if not src.text[line_start:value_end].strip():
        return line_start  # a block value ends where the next entry's line starts
    if _OWN_ENTRY_END.fullmatch(src.rest_of_line(value_end)):
        return src.line_end(value_end)
    return None


def plan_move_first(spec: MoveFirstFix, site: Site, src: SourceText) -> Planned | str:
    parent_route = site.hit.route[:-1]
    parent = value_at(site.doc.data.roots, parent_route)
    if not isinstance(parent, dict) or spec.key not in parent or next(iter(parent)) == spec.key:
        return f"there is no later `{spec.key}:` to move"
    first = src.range(site.doc.span(parent_route + (next(iter(parent)),), "key"))[0]
    key = src.range(site.doc.span(parent_route + (spec.key,), "key"))[0]
    insert, start = src.line_start(first), src.line_start(key)
    end = _entry_end(src, src.range(site.doc.span(parent_route + (spec.key,), "value"))[1])
    if src.text[insert:first].strip() or src.text[start:key].strip() or end is None:
        return "the entries share lines; move it by hand"
    block = src.text[start:end]
    while block and (lines := block.splitlines(keepends=True)) and _blank_or_comment(lines[-1]):
        block, end = block[: -len(lines[-1])], end - len(lines[-1])
    if not block.endswith("\n"):  # the last line of a file without a final newline
        block, start = block + "\n", start - 1
    edits = [Edit(insert, insert, block), Edit(start, end, "")]
    return edits, [Expect("move-first", parent_route, ((spec.key, spec.key),))], f"moved `{spec.key}:` first"


def _blank_or_comment(line: str) -> bool:
    return not line.strip() or line.lstrip().startswith("#")


def plan_add_argument(spec: AddArgumentFix, site: Site, src: SourceText) -> Planned | str:
    if site.doc.kind not in ("graphql", "python-source"):
        where = f"the query is inside a {site.doc.kind} string whose quoting sunset does not rewrite"
        return f"{where}; add `{spec.argument}` by hand"
    start, end = src.range(_span(site))
    paren = re.compile(r"[ \t]*\(").match(src.text, end)
    if paren is None:
        at, text = end, f"({spec.argument})"
    else:
        at = paren.end()
        text = spec.argument if src.text[at : at + 1] == ")" else f"{spec.argument}, "
    old = src.text[start:at]
    route = refine(site.doc, site.hit.route, _span(site))
    return [Edit(at, at, text)], [Expect("in-text", route, ((old, old + text),))], f"added `{spec.argument}`"


PLANNERS: dict[str, Callable[[Any, Site, SourceText], Planned | str]] = {
    "rename": plan_rename,
    "set-value": plan_set_value,
    "delete": plan_delete,
    "move-first": plan_move_first,
    "add-argument": plan_add_argument,
}

if set(PLANNERS) != set(FIX_SPECS):  # pragma: no cover - a developer error, caught by any test run
    raise RuntimeError("scanner.fix.plan.PLANNERS and scanner.rules.fixes.FIX_SPECS name different kinds")


def plan(spec: AnyFix, site: Site, src: SourceText) -> Change | str:
    """The change that fixes this finding, or why there is none here."""
    planned = PLANNERS[spec.kind](spec, site, src)
    if isinstance(planned, str):
        return planned
    edits, expects, summary = planned
    return Change(site, spec, tuple(edits), tuple(expects), summary)
