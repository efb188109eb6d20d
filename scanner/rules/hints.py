"""A policy's fix hint (`replacement:`), filled from each finding.

`replacement` is a text, or a list of cases tried in order: the first whose conditions fit the
finding (`kinds`: the document kinds, gitlab.rb vs gitlab.yml syntax; `route`: a regex searched in
the finding's symbolic path; `match`: a regex searched in what matched) and whose placeholders can
all be filled gives the hint. Placeholders:

* `{match}`: what matched (an environment's name, a variable's name);
* `{key}`: the last key of the finding's path; `{route[N]}`: its Nth key (0: the first under the
  document's root; -1: the last);
* `{value}`: the value at the finding's path as written in the file; `{value:a.b|c}`: the value at
  `a.b` below it, else at `c` (a case whose value is not there does not fit: the next is tried).

Other braces are text (`{aud: …}`, `{ destroyPackage }`). The schema (`scanner.rules.schema`) checks
every placeholder when a policy is loaded; `scanner.engine.findings` fills them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from scanner.core.document import Document, RouteError
from scanner.core.redact import redact
from scanner.core.results import Route
from scanner.core.tree import unwrap, walk
from scanner.rules.spec import regex

PLACEHOLDER = re.compile(r"\{(?:(match|key|value)(?::([\w.\-]+(?:\|[\w.\-]+)*))?|route\[(-?\d+)\])\}")
BARE = re.compile(r"\{[A-Za-z_][\w\-]*(?:\[[^\]]*\])?(?::[^\s{}]*)?\}")  # `{name}`: meant as a placeholder


@dataclass(frozen=True, slots=True)
class Hint:
    """One case of a policy's `replacement:` (a plain text is one case without conditions)."""

    text: str
    kinds: tuple[str, ...] = ()
    route: str | None = None
    match: str | None = None

    def fits(self, kind: str, symbolic: str, matched: str) -> bool:
        return ((not self.kinds or kind in self.kinds)
                and (self.route is None or regex(self.route).search(symbolic))
                and (self.match is None or regex(self.match).search(matched)))


def problems(text: str) -> list[str]:
    """What is wrong with a case's text: a `{name}` that is no placeholder (a typo), a `:path` on `{match}`/`{key}`."""
    found = []
    for m in BARE.finditer(text):
        p = PLACEHOLDER.fullmatch(m.group(0))
        if p is None or (p.group(2) and p.group(1) != "value"):
            found.append(f"`{m.group(0)}` is not a placeholder ({{match}}, {{key}}, {{route[N]}}, {{value}}, "
                         "{value:a.b|c})")
    return found


def fill(hints: tuple[Hint, ...], doc: Document, route: Route, symbolic: str, matched: str) -> str | None:
    """The hint for one finding: the first case that fits and fills, or None."""
    for hint in hints:
        if hint.fits(doc.kind, symbolic, matched):
            text = _filled(hint.text, doc, route, matched)
            if text is not None:
                return text
    return None


def fill_message(text: str, doc: Document, route: Route, matched: str) -> str:
    """A finding's message: the policy's `message` with the same placeholders as a hint (`{value}`:
    the value written at the finding's path, such as a provider's name); when one cannot be filled,
    only `{match}` is."""
    if "{" not in text:
        return text
    filled = _filled(text, doc, route, matched, unquote=True)
    return filled if filled is not None else text.replace("{match}", redact(matched))


def describe(hints: tuple[Hint, ...]) -> str | None:
    """The policy-level text (generated docs, SARIF rule help): each case, placeholders as `<…>`."""
    if not hints:
        return None

    def shown(hint: Hint) -> str:
        text = PLACEHOLDER.sub(_shown, hint.text)
        where = [f"in {', '.join(hint.kinds)}"] if hint.kinds else []
        where += [f"at `{hint.route}`"] if hint.route else []
        where += [f"for `{hint.match}`"] if hint.match else []
        return text + (f" ({', '.join(where)})" if where and len(hints) > 1 else "")

    return " · ".join(shown(h) for h in hints)


def _shown(m: re.Match[str]) -> str:
    """A placeholder as the docs show it: `<match>`, `<key>`, `<route[-2]>`, `<main.database or database>`."""
    if m.group(3) is not None:
        return f"<route[{m.group(3)}]>"
    return f"<{m.group(2).replace('|', ' or ')}>" if m.group(2) else f"<{m.group(1)}>"


def _filled(text: str, doc: Document, route: Route, matched: str, unquote: bool = False) -> str | None:
    keys = list(route[1:])
    missing = False

    def one(m: re.Match[str]) -> str:
        nonlocal missing
        name, paths, index = m.group(1), m.group(2), m.group(3)
        if name == "match":
            return redact(matched)
        if index is not None or name == "key":
            i = int(index) if index is not None else -1
            if -len(keys) <= i < len(keys) and isinstance(keys[i], str):
                return str(keys[i])
        elif name == "value":
            for below in (paths or "").split("|"):
                value = _written(doc, route, [p for p in below.split(".") if p])
                if value is not None:
                    quoted = unquote and len(value) > 1 and value[0] == value[-1] and value[0] in "'\""
                    return redact(value[1:-1] if quoted else value)
        missing = True
        return ""

    result = PLACEHOLDER.sub(one, text)
    return None if missing else result


def _written(doc: Document, route: Route, below: list[str]) -> str | None:
    """The scalar at `route` + `below` as written in the file (one line), else None."""
    target = (*route, *below)
    try:
        value: Any = unwrap(walk(doc.data.roots[target[0]], target[1:]))
        span = doc.span(target, "value")
    except (RouteError, KeyError, IndexError, TypeError):
        return None
    if isinstance(value, (dict, list)) or value is None:
        return None
    line, column, end_line, end_column = span
    if line == end_line and end_column > column:
        return doc.line_text(line)[column - 1:end_column - 1]
    return str(value)
