"""Python source to an `ast.Module`, bounded: every failure is a `ParseError`, and a tree nested
deeper than `MAX_DEPTH` is refused before the extractor (which calls itself once per level) reads it.

`ast.parse` guards its own C recursion (a `RecursionError` or `MemoryError`, caught here); the depth
of the tree it returns is measured with an explicit stack, never by recursion.
"""

from __future__ import annotations

import ast

from scanner.core.tree import ParseError

MAX_DEPTH = 200  # syntax-tree levels: twice as deep as a YAML document may nest


def parse_module(text: str) -> ast.Module:
    """The module, or a `ParseError` with the line where it cannot be read."""
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        raise ParseError(f"invalid Python: {exc.msg}", exc.lineno, exc.offset) from None
    except (RecursionError, MemoryError):
        raise ParseError("Python nested too deep for the parser") from None
    except ValueError as exc:  # a NUL byte, before Python 3.12
        raise ParseError(f"invalid Python: {exc}") from None
    deep = _too_deep(tree)
    if deep is not None:
        raise ParseError(f"Python nested deeper than {MAX_DEPTH} levels", *deep)
    return tree


def _too_deep(tree: ast.AST) -> tuple[int | None, int | None] | None:
    """The (line, column) of a node deeper than `MAX_DEPTH` (or of its nearest placed parent)."""
    stack: list[tuple[ast.AST, int, tuple[int | None, int | None]]] = [(tree, 0, (None, None))]
    while stack:
        node, depth, where = stack.pop()
        if isinstance(node, ast.expr | ast.stmt):
            where = (node.lineno, node.col_offset + 1)
        if depth > MAX_DEPTH:
            return where
        stack.extend((child, depth + 1, where) for child in ast.iter_child_nodes(node))
    return None
