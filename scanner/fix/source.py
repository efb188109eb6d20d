"""Positions in a document's text, and the parsed data at a route.

Parsers record 1-based line and column spans (end exclusive); edits are made at character
offsets in the same text. Lines are counted at `\\n`, as every parser here counts them; a `\\r`
before it stays part of its line, so CRLF files keep their line ends.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from scanner.core.document import Document
from scanner.core.results import Route
from scanner.core.tree import Span, unwrap, walk

_MISSING = object()


@dataclass(slots=True)
class SourceText:
    text: str
    starts: list[int] = field(init=False)

    def __post_init__(self) -> None:
        self.starts = [0] + [m.end() for m in re.finditer("\n", self.text)]

    def offset(self, line: int, column: int) -> int:
        if not 0 < line <= len(self.starts):
            return len(self.text)
        return min(self.starts[line - 1] + column - 1, len(self.text))

    def range(self, span: Span) -> tuple[int, int]:
        return self.offset(span[0], span[1]), self.offset(span[2], span[3])

    def line_start(self, offset: int) -> int:
        return self.text.rfind("\n", 0, offset) + 1

    def line_end(self, offset: int) -> int:
        """The offset just after the line's `\\n` (or the end of the text)."""
        end = self.text.find("\n", offset)
        return len(self.text) if end < 0 else end + 1

    def rest_of_line(self, offset: int) -> str:
        end = self.text.find("\n", offset)
        return self.text[offset : len(self.text) if end < 0 else end]


def unquote(text: str) -> tuple[int, str]:
    """`"x"` or `'x'` → (1, `x`): the offset of the inner text and the text; else (0, text)."""
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return 1, text[1:-1]
    return 0, text


def value_at(roots: list[Any], route: Route) -> Any:
    """The data at a route (tags unwrapped), or `_MISSING`."""
    try:
        return unwrap(walk(roots, route))
    except (KeyError, IndexError, TypeError):
        return _MISSING


def exists(value: Any) -> bool:
    return value is not _MISSING


def _inside(outer: Span, inner: Span) -> bool:
    return (outer[0], outer[1]) <= (inner[0], inner[1]) and (inner[2], inner[3]) <= (outer[2], outer[3])


def _holds(doc: Document, route: Route, span: Span) -> bool:
    try:
        return _inside(doc.span(route, "value"), span)
    except (LookupError, TypeError):
        return False


def refine(doc: Document, route: Route, span: Span) -> Route:
    """The route of the deepest value that holds `span` (a word inside one item of `args:`). A hit's
    route names where a call is written; a read of its response can be in a later script item, so
    the search starts at the document when the route does not hold the span."""
    route = route if _holds(doc, route, span) else route[:1]
    node = value_at(doc.data.roots, route)
    while isinstance(node, dict | list):
        spans = doc.data.table.get(id(node))
        if spans is None:
            break
        items = spans.items() if isinstance(node, dict) else enumerate(spans)
        step = next((k for k, s in items if _inside(s[1] if isinstance(node, dict) else s, span)), _MISSING)
        if step is _MISSING:
            break
        route, node = route + (step,), value_at(doc.data.roots, route + (step,))
    return route
