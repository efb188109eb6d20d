"""Python source to an `ast.Module`, bounded: every failure is a `ParseError`, and a tree nested
deeper than `MAX_DEPTH` is refused before the extractor (which calls itself once per level) reads it.

`ast.parse` guards its own C recursion (a `RecursionError` or `MemoryError`, caught here); the depth
of the tree it returns is measured with an explicit stack, never by recursion.
"""

from __future__ import annotations

import ast
import io
import tokenize

from scanner.core.tree import ParseError

MAX_DEPTH = 200  # syntax-tree levels: twice as deep as a YAML document may nest


def parse_module(text: str) -> ast.Module:
    """The module, or a `ParseError` with the line where it cannot be read."""
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        raise ParseError(f"invalid Python: {exc.msg}", exc.lineno, exc.offset) from None
    except (RecursionError, MemoryError):
        raise ParseError("Python nested too deep for the parser", _deep_line(text)) from None
    except ValueError as exc:  # a NUL byte, before Python 3.12
        raise ParseError(f"invalid Python: {exc}") from None
    deep = _too_deep(tree)
    if deep is not None:
        raise ParseError(f"Python nested deeper than {MAX_DEPTH} levels", *deep)
    return tree


def _deep_line(text: str) -> int | None:
    """The first line of the statement `ast.parse` gives up on: the shortest prefix of whole logical
    lines that still fails, found by bisection (a dozen parses of a prefix, each failing at most as
    deep as the whole). None when the text cannot be tokenized into lines."""
    statements: list[tuple[int, int]] = []  # (first line, last line) of each logical line
    first = None
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.NEWLINE:
                statements.append((first or tok.start[0], tok.end[0]))
                first = None
            elif first is None and tok.type not in _LAYOUT:
                first = tok.start[0]
    except (tokenize.TokenError, SyntaxError, RecursionError, MemoryError):
        return None
    lines = text.splitlines(keepends=True)
    low, high = 0, len(statements) - 1  # the answer: the first statement whose prefix fails
    if high < 0 or not _fails("".join(lines[: statements[high][1]])):
        return None
    while low < high:
        middle = (low + high) // 2
        if _fails("".join(lines[: statements[middle][1]])):
            high = middle
        else:
            low = middle + 1
    return statements[low][0]


_LAYOUT = frozenset({tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING})


def _fails(prefix: str) -> bool:
    try:
        ast.parse(prefix)
    except (RecursionError, MemoryError):
        return True
    except (SyntaxError, ValueError):  # a prefix may end inside a block: not the failure looked for
        return False
    return False


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
