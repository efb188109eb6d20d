"""Reading Python source: which files mention the API, the module's syntax tree (bounded), and
positions — character columns for AST nodes (whose offsets count UTF-8 bytes) and the position
of every character of a string literal, escapes included.

Parsing is bounded: every failure is a `ParseError`, and a tree nested deeper than `MAX_DEPTH` is
refused before the extractor (which calls itself once per level) reads it. `ast.parse` guards its
own C recursion (a `RecursionError` or `MemoryError`, caught here); the depth of the tree it
returns is measured with an explicit stack, never by recursion.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize

from scanner.core.tree import ParseError, Tree
from scanner.readers.api.model import Pos, text_tree
from scanner.readers.api.paths import API_BASE_ENV

# Environment variables that hold the REST v4 base URL: a URL read from one is an API URL.
API_ENV = API_BASE_ENV
PREFILTER = re.compile(r"/api/v4|CI_API_V4_URL|/api/graphql|CI_API_GRAPHQL_URL|graphql|gql|/tags/reference/|"
                       r"\b(?:" + "|".join(map(re.escape, API_ENV)) + r")\b|^\s*(?:import|from)\s+gitlab\b", re.M)


def parse_python(text: str) -> Tree:
    """The parse step of a Python file: Python that mentions the API must parse, or the file is
    reported as an input error."""
    if PREFILTER.search(text):
        parse_module(text)
    return text_tree(text)


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


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b",
            "f": "\f", "v": "\v", "0": "\0"}


_LINE_END = re.compile(r"\r\n|\r|\n")  # the line ends Python's parser counts (not form feed, NEL, U+2028)


class Source:
    def __init__(self, text: str) -> None:
        self.lines = _LINE_END.split(text)
        self._chars: dict[int, list[int]] = {}  # a line that is not ASCII: character index of each byte offset

    def col(self, line: int, byte_offset: int) -> int:
        """1-based character column of a UTF-8 byte offset on a 1-based line."""
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        if text.isascii():
            return min(byte_offset, len(text)) + 1
        index = self._chars.get(line)
        if index is None:
            index = [k for k, ch in enumerate(text) for _ in range(len(ch.encode(errors="surrogatepass")))]
            index.append(len(text))
            self._chars[line] = index
        return index[min(byte_offset, len(index) - 1)] + 1

    def start(self, node: ast.AST) -> Pos:
        line = int(getattr(node, "lineno", 1) or 1)
        return line, self.col(line, int(getattr(node, "col_offset", 0) or 0))

    def end(self, node: ast.AST) -> Pos:
        line = int(getattr(node, "end_lineno", None) or getattr(node, "lineno", 1) or 1)
        return line, self.col(line, int(getattr(node, "end_col_offset", 0) or 0))

    def string_positions(self, node: ast.Constant) -> tuple[Pos, ...] | None:
        """The position of each character of a single string literal; None if the literal is
        an implicit concatenation or cannot be read back exactly."""
        line, col = self.start(node)
        row, j = line - 1, col - 1
        text = self.lines[row] if row < len(self.lines) else ""
        while j < len(text) and text[j].isalpha():
            j += 1
        prefix = text[col - 1 : j].lower()
        if "f" in prefix or "b" in prefix or j >= len(text) or text[j] not in "'\"":
            return None
        quote = text[j : j + 3] if text[j : j + 3] in ('"""', "'''") else text[j]
        j += len(quote)
        out: list[str] = []
        pos: list[Pos] = []
        while row < len(self.lines):
            text = self.lines[row]
            while j < len(text):
                if text.startswith(quote, j):
                    return tuple(pos) if "".join(out) == node.value else None
                ch = text[j]
                if ch == "\\" and "r" not in prefix:
                    if j + 1 >= len(text):
                        j += 1
                        continue  # backslash-newline: a line continuation inside the literal
                    out.append(_ESCAPES.get(text[j + 1], text[j + 1]))
                    pos.append((row + 1, j + 1))
                    j += 2
                    continue
                out.append(ch)
                pos.append((row + 1, j + 1))
                j += 1
            if len(quote) == 1 and not text.endswith("\\"):
                return None
            if len(quote) == 3:
                out.append("\n")
                pos.append((row + 1, len(text) + 1))
            row, j = row + 1, 0
        return None

    def fstring_positions(self, node: ast.JoinedStr) -> tuple[Pos, ...] | None:
        """The position of each literal character of an f-string (its `Constant` pieces, in order,
        implicit concatenations included); None when they cannot be read back exactly."""
        expected = "".join(str(v.value) for v in node.values if isinstance(v, ast.Constant))
        (row, j), (end_row, end_j) = self.start(node), self.end(node)
        row, j, end_row, end_j = row - 1, j - 1, end_row - 1, end_j - 1
        out: list[str] = []
        pos: list[Pos] = []
        while (row, j) < (end_row, end_j) and row < len(self.lines):
            text = self.lines[row]
            if j >= len(text) or text[j] in " \t\\":
                row, j = (row + 1, 0) if j >= len(text) or text[j] == "\\" else (row, j + 1)
                continue
            k = j
            while k < len(text) and text[k].isalpha():
                k += 1
            if k >= len(text) or text[k] not in "'\"":
                return None
            prefix = text[j:k].lower()
            quote = text[k : k + 3] if text[k : k + 3] in ('"""', "'''") else text[k]
            found = self._literal(row, k + len(quote), quote, "f" in prefix, "r" in prefix, out, pos)
            if found is None:
                return None
            row, j = found
        return tuple(pos) if "".join(out) == expected else None

    def _literal(self, row: int, j: int, quote: str, formatted: bool, raw: bool, out: list[str],
                 pos: list[Pos]) -> tuple[int, int] | None:
        """Read one string literal from after its opening quote; returns where it ends."""
        depth = 0
        while row < len(self.lines):
            text = self.lines[row]
            while j < len(text):
                ch = text[j]
                if depth:
                    if ch in "'\"" and not text.startswith(quote, j):
                        close = text.find(ch, j + 1)
                        j = len(text) if close < 0 else close + 1
                        continue
                    depth += {"{": 1, "}": -1}.get(ch, 0)
                elif text.startswith(quote, j):
                    return row, j + len(quote)
                elif formatted and text.startswith(("{{", "}}"), j):
                    out.append(ch)
                    pos.append((row + 1, j + 1))
                    j += 1
                elif formatted and ch == "{":
                    depth = 1
                elif ch == "\\" and not raw and j + 1 < len(text):
                    out.append(_ESCAPES.get(text[j + 1], text[j + 1]))
                    pos.append((row + 1, j + 1))
                    j += 1
                elif ch != "\\" or raw:
                    out.append(ch)
                    pos.append((row + 1, j + 1))
                j += 1
            if len(quote) == 1 and not text.endswith("\\") and not depth:
                return None
            if len(quote) == 3 and not depth:
                out.append("\n")
                pos.append((row + 1, len(text) + 1))
            row, j = row + 1, 0
        return None
