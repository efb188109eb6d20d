"""`variable-reference`: `$NAME`, `${NAME}`, `%NAME%` or `$env:NAME` of a predefined variable GitLab
removed, read in scripts (shell comments are not uses) and in variable values."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from scanner.core.document import Document
from scanner.core.results import Route
from scanner.readers import ci
from scanner.readers.shell import ScriptText, comment_start, map_lines
from scanner.rules import spec
from scanner.rules.hits import Hit
from scanner.rules.policy import Policy

if TYPE_CHECKING:
    from scanner.rules import schema


@dataclass(frozen=True, slots=True)
class VariableReferenceMatcher(spec.Matcher):
    kind: ClassVar[str] = "variable-reference"
    names: frozenset[str]
    pattern: re.Pattern[str]

    def script_words(self) -> Iterable[str]:
        """What a script must contain to be worth reading for this matcher."""
        return self.names


def compile(s: schema.VariableReferenceSpec, build: spec.Build) -> VariableReferenceMatcher:
    names = spec.checked_names(s.names)
    alt = "|".join(sorted(map(re.escape, names), key=len, reverse=True))
    return VariableReferenceMatcher(frozenset(names), re.compile(rf"(?:\$\{{?|%|\$env:)({alt})(?![A-Za-z0-9_])"))


Entries = list[tuple[Policy, VariableReferenceMatcher]]


def in_script(entries: Entries, script: ScriptText, route: Route, shell: bool = False) -> Iterator[Hit]:
    for policy, matcher in entries:
        for i, (line_text, _) in enumerate(script.lines()):
            code = line_text[: comment_start(line_text)] if shell else line_text
            for m in matcher.pattern.finditer(code):
                line, col = script.position(i, m.start())
                yield Hit(policy, route, "value", m.group(1), (line, col, line, col + len(m.group(0))))


def in_variable_values(entries: Entries, doc: Document) -> Iterator[Hit]:
    """References inside the values of the CI file's `variables:` blocks."""
    if not entries:
        return
    for route, block in ci.variable_blocks(doc):
        for name, value in block.items():
            text = ci.variable_value(value)
            if isinstance(text, str) and ("$" in text or "%" in text):
                yield from _in_value(entries, doc, route + (name,), text, value)


def _in_value(entries: Entries, doc: Document, route: Route, text: str, raw: Any) -> Iterator[Hit]:
    scalar_route = route + ("value",) if isinstance(raw, dict) else route
    yield from in_script(entries, map_lines(text, doc.span(scalar_route, "value"), doc.lines), scalar_route)
