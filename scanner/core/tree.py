"""The shape every parser returns: plain data per document, and positions beside it.

`Tree.table[id(container)]` holds, for a mapping, `{key: (key_span, value_span)}` and, for a
sequence, a list of value spans. Positions never live inside the user's data, so a JSONPath
can never match them, and a value shared through an alias has one position.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

Span = tuple[int, int, int, int]  # line, column, end line, end column; 1-based, end exclusive


class ParseError(Exception):
    """A file a parser cannot read; becomes an input error naming the file and line."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


@dataclass(frozen=True, slots=True)
class Tagged:
    """A value under a non-standard tag, e.g. `!reference [.setup, script]`."""

    tag: str
    value: Any


def unwrap(value: Any) -> Any:
    """The value under a tag; any other value as it is."""
    return value.value if isinstance(value, Tagged) else value


def walk(node: Any, steps: Iterable[str | int]) -> Any:
    """The data reached from `node` by `steps` (a key or an index each), tags unwrapped before
    each step but not after the last. A step that leads nowhere raises what indexing raises:
    `KeyError`, `IndexError` or `TypeError`; each caller decides what that means."""
    for step in steps:
        node = (node.value if isinstance(node, Tagged) else node)[step]
    return node


@dataclass(slots=True)
class Tree:
    """Plain data for each document in a file, plus the position side table."""

    roots: list[Any]
    root_spans: list[Span]
    table: dict[int, Any] = field(default_factory=dict)
    keys: set[str] = field(default_factory=set)
    # `(line, message)` for statements a parser could not read; the rest of the file was read.
    warnings: list[tuple[int | None, str]] = field(default_factory=list)
    # `(line, message)` worth saying that is not an error in the file (template syntax not read).
    notices: list[tuple[int | None, str]] = field(default_factory=list)
    # Documents of another kind written inside this one, as (kind, tree) with positions in this
    # file: a compose service's `GITLAB_OMNIBUS_CONFIG` is a `gitlab.rb`.
    embedded: list[tuple[str, Tree]] = field(default_factory=list)

    def key_lines(self, index: int) -> dict[tuple[str | int, ...], int]:
        """Route → line for every key and item of one document (used for policy errors)."""
        out: dict[tuple[str | int, ...], int] = {(): self.root_spans[index][0]}
        seen: set[int] = set()
        stack: list[tuple[tuple[str | int, ...], Any]] = [((), self.roots[index])]
        while stack:
            route, value = stack.pop()
            if id(value) in seen:
                continue
            seen.add(id(value))
            spans = self.table.get(id(value))
            if isinstance(value, dict) and spans is not None:
                for key, child in value.items():
                    out[route + (key,)] = spans[key][0][0]
                    stack.append((route + (key,), child))
            elif isinstance(value, list) and spans is not None:
                for i, child in enumerate(value):
                    out[route + (i,)] = spans[i][0]
                    stack.append((route + (i,), child))
        return out
