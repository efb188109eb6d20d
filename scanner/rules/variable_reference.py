"""`variable-reference`: `$NAME`, `${NAME}`, `%NAME%` or `$env:NAME` of a predefined variable GitLab
removed, read in scripts (shell comments are not uses), in variable values and in the CI file's other
values where GitLab expands variables (`cache:key`, `rules:if`, `image`, `environment`, …)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from scanner.core.document import Document
from scanner.core.results import Route
from scanner.core.tree import Tagged
from scanner.readers import ci
from scanner.readers.shell import ScriptText, comment_start, map_lines
from scanner.rules import spec
from scanner.rules.hits import Hit
from scanner.rules.kind import Entries, MatcherKind, Peers
from scanner.rules.policy import Policy

if TYPE_CHECKING:
    from scanner.rules.facets import Facets


class Spec(spec.Spec):
    names: tuple[str, ...] = spec.field(min_length=1)


@dataclass(frozen=True, slots=True)
class VariableReferenceMatcher(spec.Matcher):
    kind: ClassVar[str] = "variable-reference"
    names: frozenset[str]

    def script_words(self) -> Iterable[str]:
        """What a script must contain to be worth reading for this matcher."""
        return self.names


def compile(s: Spec, build: spec.Build) -> VariableReferenceMatcher:
    return VariableReferenceMatcher(frozenset(spec.checked_names(s.names)))


def _pattern(names: Iterable[str]) -> re.Pattern[str]:
    """`$NAME`, `${NAME}`, `%NAME%`, `$env:NAME` of exactly these names (a longer name is another variable)."""
    alt = "|".join(sorted(map(re.escape, names), key=len, reverse=True))
    return re.compile(rf"(?:\$\{{?|%|\$env:)({alt})(?![A-Za-z0-9_])")


@dataclass(frozen=True, slots=True)
class Lookup:
    """Every policy's names in one pattern, so a script is read once however many policies name
    variables; each name found leads to the policies naming it."""

    pattern: re.Pattern[str]
    policies: dict[str, tuple[Policy, ...]]


def lookup(entries: Entries, peers: Peers) -> Lookup:
    policies: dict[str, list[Policy]] = {}
    for policy, m in entries:
        for name in sorted(m.names):
            policies.setdefault(name, []).append(policy)
    return Lookup(_pattern(tuple(policies)), {name: tuple(found) for name, found in policies.items()})


def in_scripts(refs: Lookup, facets: Facets) -> Iterator[Hit]:
    for item, script in facets.scripts.items:
        yield from in_script(refs, script, item.route, shell=True)


def in_script(refs: Lookup, script: ScriptText, route: Route, shell: bool = False) -> Iterator[Hit]:
    for i, (line_text, _) in enumerate(script.lines()):
        code = line_text[: comment_start(line_text)] if shell else line_text
        for m in refs.pattern.finditer(code):
            line, col = script.position(i, m.start())
            span = (line, col, line, col + len(m.group(0)))
            for policy in refs.policies[m.group(1)]:
                yield Hit(policy, route, "value", m.group(1), span)


def in_ci_values(refs: Lookup, facets: Facets) -> Iterator[Hit]:
    """References in the values of the CI file's `variables:` blocks, then in its other values."""
    yield from in_variable_values(refs, facets.doc)
    yield from in_keyword_values(refs, facets.doc)


def in_variable_values(refs: Lookup, doc: Document) -> Iterator[Hit]:
    """References inside the values of the CI file's `variables:` blocks."""
    for route, block in ci.variable_blocks(doc):
        for name, value in block.items():
            text = ci.variable_value(value)
            if isinstance(text, str) and ("$" in text or "%" in text):
                yield from _in_value(refs, doc, route + (name,), text, value)


def _in_value(refs: Lookup, doc: Document, route: Route, text: str, raw: Any) -> Iterator[Hit]:
    scalar_route = route + ("value",) if isinstance(raw, dict) else route
    yield from in_script(refs, map_lines(text, doc.span(scalar_route, "value"), doc.lines), scalar_route)


# Read by the script and variable passes; every other string value of a CI file is read here.
_ELSEWHERE = frozenset({"script", "before_script", "after_script", "variables"})


def in_keyword_values(refs: Lookup, doc: Document) -> Iterator[Hit]:
    """References in the CI file's other values (`cache:key: $CI_BUILD_REF_NAME`, `rules: - if:`)."""
    if refs.pattern.search(doc.text) is None:
        return
    seen: set[int] = set()
    stack: list[tuple[Route, Any]] = [((i,), root) for i, root in enumerate(doc.data.roots)]
    while stack:
        route, node = stack.pop()
        node = node.value if isinstance(node, Tagged) else node
        if isinstance(node, (dict, list)):
            if id(node) in seen:
                continue  # an alias: read where it is written
            seen.add(id(node))
            steps = node.items() if isinstance(node, dict) else enumerate(node)
            stack += [(route + (k,), v) for k, v in steps if not (isinstance(k, str) and k in _ELSEWHERE)]
        elif isinstance(node, str) and len(route) > 1 and ("$" in node or "%" in node) and refs.pattern.search(node):
            yield from in_script(refs, map_lines(node, doc.span(route, "value"), doc.lines), route)


KIND = MatcherKind(Spec, VariableReferenceMatcher, compile, {"ci-variables": in_ci_values, "scripts": in_scripts},
                   lookup)
