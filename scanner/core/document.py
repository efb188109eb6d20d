"""A parsed input file: its text, its data, and the one function that turns a route into a place.

Matchers yield routes (`(0, 'include', 2, 'template')`); `Document.span` walks the route
through the data (`scanner.core.tree.walk`) and reads the position from the parser's side
table, and `Document.location` turns that into a finding's place. Nothing searches the text
for a finding's line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from scanner.core.lines import LineIndex, split_lines
from scanner.core.results import Location, Route, route_text
from scanner.core.tree import Span, Tree, unwrap, walk

Part = Literal["key", "value"]


class RouteError(LookupError):
    """A route that does not lead anywhere in the document (a matcher bug)."""


@dataclass(frozen=True, slots=True, eq=False, weakref_slot=True)
class Document:
    """Immutable once read. Views derived from it (a CI file's jobs, the fixer's original data) are
    cached beside it, keyed by the document (`weakref`), and go when the document goes."""

    path: str  # relative to the scan base, POSIX
    abspath: Path
    kind: str
    text: str
    data: Tree
    # A document written inside another (`Tree.embedded`): the file's kind, its index there, and
    # how many warnings the file's parse gave (a fix is verified by parsing the file again).
    host: tuple[str, int, int] | None = None
    lines: tuple[str, ...] = field(init=False, repr=False)
    _index: LineIndex | None = field(init=False, repr=False, default=None)

    def __post_init__(self) -> None:
        object.__setattr__(self, "lines", tuple(split_lines(self.text)))

    @property
    def line_index(self) -> LineIndex:
        """Offsets of the text's lines, built when first asked (`scanner.core.lines`)."""
        if self._index is None:
            object.__setattr__(self, "_index", LineIndex(self.text))
        assert self._index is not None
        return self._index

    def line_text(self, line: int) -> str:
        lines = self.lines
        return lines[line - 1] if 0 < line <= len(lines) else ""

    def span(self, route: Route, part: Part = "key") -> Span:
        """The span of the last step of `route`: the key itself or its value."""
        if len(route) == 1:
            return self.data.root_spans[route[0]]
        root: Any = self.data.roots[route[0]]
        try:
            container = unwrap(walk(root, route[1:-1]))
        except (KeyError, IndexError, TypeError):
            raise RouteError(f"{self.path}: no {route_text(route)}") from None
        spans = self.data.table.get(id(container))
        last = route[-1]
        if spans is None:
            raise RouteError(f"{self.path}: no positions for {route_text(route)}")
        if isinstance(container, dict):
            key_span, value_span = spans[last]
            found: Span = key_span if part == "key" else value_span
            return found
        item: Span = spans[last]
        return item

    def location(self, route: Route, part: Part = "key", span: Span | None = None) -> Location:
        """The place and its source line as written: every format redacts it (`scanner.core.redact`)."""
        where = span or self.span(route, part)
        if where[2] > where[0] and part == "value":
            # a multi-line value (a block) is shown by its first line only
            where = (where[0], where[1], where[0], len(self.line_text(where[0])) + 1)
        return Location.clipped(self.path, where, route_text(route), self.line_text(where[0]))
