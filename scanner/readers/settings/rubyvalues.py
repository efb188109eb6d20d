"""Ruby statements and literal values, read from `scanner.readers.settings.ruby` tokens.

`statements` splits tokens at newlines and `;` outside brackets (a line ending in an operator
or `,` goes on). An unclosed or mismatched bracket is a warning for that statement: a bracket
still open when a line starts with an identifier in the statement's own column or left of it
(column 1 for most settings; a setting inside `if … end` is indented, and so are its neighbours)
was never closed, and reading goes on there; after a mismatched one it resumes at the next line
starting in that column. Reading never goes back: linear in the tokens.

`Values` reads one literal: strings, symbols (read as their name: Omnibus treats `:webhook`
and `'webhook'` alike), numbers, `true`/`false`/`nil`, arrays, hashes (`=>` and `key:`), and
`%w[]`. Anything else (`ENV['X']`, `File.read(...)`, `1024 * 1024`) is kept whole as an
opaque `Tagged('!ruby', source)`: present, but never equal to a literal.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from scanner.core.tree import Span, Tagged
from scanner.readers.settings.ruby import MAX_DEPTH, Tok

_OPEN = {"(": ")", "[": "]", "{": "}"}
_CLOSE = frozenset(_OPEN.values())
_CONTINUE = frozenset(
    ["=", ",", "+", "-", "*", "/", "||", "&&", "=>", ".", "&&", "||", "(", "[", "{", "+=", "-=", "||=", "<<", "?", ":"]
)
Problem = tuple[int, str]


class Unreadable(Exception):
    """A value this reader does not understand; the statement becomes a warning."""


def statements(tokens: list[Tok], warnings: list[Problem]) -> Iterator[list[Tok]]:
    """Each statement's tokens; bad ones are reported in `warnings` and skipped."""
    i, n = 0, len(tokens)
    while i < n:
        while i < n and tokens[i].kind == "newline":
            i += 1
        column = tokens[i].span[1] if i < n else 1
        stmt, i, problem = _one(tokens, i, column)
        if problem is not None:
            warnings.append(problem)
            if not _starts_statement(tokens, i, column):  # else it stopped at the next statement: go on there
                i = _resync(tokens, i - 1, column)
        elif stmt:
            yield stmt


def _one(tokens: list[Tok], i: int, column: int) -> tuple[list[Tok], int, Problem | None]:
    stack: list[Tok] = []
    out: list[Tok] = []
    n = len(tokens)
    while i < n:
        tok = tokens[i]
        i += 1
        if tok.kind == "newline" or (tok.kind == "punct" and tok.text == ";" and not stack):
            if stack and _starts_statement(tokens, i, column):  # a new statement at its column: this one never closed
                return out, i, _unclosed(stack[0])
            if stack or (out and tok.kind == "newline" and _continues(out, tokens, i)):
                continue
            if out:
                return out, i, None
            continue
        if tok.kind == "punct" and tok.text in _OPEN:
            stack.append(tok)
        elif tok.kind == "punct" and tok.text in _CLOSE:
            if not stack or _OPEN[stack[-1].text] != tok.text:
                return out, i, (tok.span[0], f"unexpected `{tok.text}`; this statement is not read")
            stack.pop()
        out.append(tok)
    if stack:
        return out, i, _unclosed(stack[0])
    return out, i, None


def _unclosed(opener: Tok) -> Problem:
    return opener.span[0], f"`{opener.text}` opened here is never closed; this statement is not read"


def _starts_setting(tokens: list[Tok], i: int, column: int = 1) -> bool:
    """`name['key'] =` starting at `column` or left of it: Omnibus indents what is inside brackets."""
    head = tokens[i : i + 5]
    return (
        len(head) == 5
        and head[0].kind == "ident"
        and head[0].span[1] <= column
        and head[1].text == "["
        and head[2].kind in ("string", "symbol")
        and head[3].text == "]"
        and head[4].kind == "punct"
        and head[4].text in ("=", "||=", "[")
    )


def _continues(out: list[Tok], tokens: list[Tok], i: int) -> bool:
    if out and out[-1].kind == "punct" and out[-1].text in _CONTINUE:
        return True
    while i < len(tokens) and tokens[i].kind == "newline":
        i += 1
    return i < len(tokens) and tokens[i].kind == "punct" and tokens[i].text in (".", "&.")


def _starts_statement(tokens: list[Tok], i: int, column: int) -> bool:
    """A setting (`_starts_setting`), or any identifier (`external_url`, `git_data_dirs`, `if`, `end`),
    at the start of a line at `column` or left of it: inside brackets Omnibus indents, so a bracket
    still open there was never closed."""
    if _starts_setting(tokens, i, column):
        return True
    return i < len(tokens) and tokens[i].kind == "ident" and tokens[i].span[1] <= column and (
        i == 0 or tokens[i - 1].kind == "newline")


def _resync(tokens: list[Tok], start: int, column: int = 1) -> int:
    """The next token after the line of `start` (where the bad statement went wrong) that starts a line
    at the statement's column or left of it; reading never goes back, so it stays linear."""
    line = tokens[start].span[0]
    for j in range(start + 1, len(tokens)):
        tok = tokens[j]
        if tok.span[0] > line and tok.span[1] <= column and tokens[j - 1].kind == "newline":
            return j
    return len(tokens)


class Values:
    """Reads literal values from a statement's tokens, recording positions in `table`."""

    def __init__(self, tokens: list[Tok], lines: list[str], table: dict[int, Any], keys: set[str]) -> None:
        self.toks = tokens
        self.i = 0
        self.lines = lines
        self.table = table
        self.keys = keys
        self.depth = 0  # arrays and hashes open around the value being read

    def at(self, offset: int = 0) -> Tok | None:
        j = self.i + offset
        return self.toks[j] if j < len(self.toks) else None

    def is_punct(self, text: str, offset: int = 0) -> bool:
        tok = self.at(offset)
        return tok is not None and tok.kind == "punct" and tok.text == text

    def expr(self, stop: frozenset[str] = frozenset()) -> tuple[Any, Span]:
        """One value up to a stop token (or the end); an operator expression is opaque."""
        first = self.i
        value, span = self.primary()
        if self.at() is None or self.stopped(stop):
            return value, span
        self.skip_until(stop)
        whole = _join(self.toks[first].span, self.toks[self.i - 1].span)
        return Tagged("!ruby", self.source(whole)), whole

    def stopped(self, stop: frozenset[str]) -> bool:
        tok = self.at()
        return tok is not None and tok.kind == "punct" and tok.text in stop

    def skip_until(self, stop: frozenset[str]) -> None:
        depth = 0
        while (tok := self.at()) is not None:
            if tok.kind == "punct":
                if depth == 0 and tok.text in stop:
                    return
                if tok.text in _OPEN:
                    depth += 1
                elif tok.text in _CLOSE:
                    depth -= 1
            self.i += 1

    def primary(self) -> tuple[Any, Span]:
        tok = self.at()
        if tok is None or (tok.kind == "punct" and tok.text in _CLOSE | {",", "=>", "="}):
            raise Unreadable("a value is missing")
        if tok.kind in ("string", "symbol", "number", "label"):
            self.i += 1
            return tok.value, tok.span
        if tok.kind == "words":
            self.i += 1
            words = list(tok.value)
            self.table[id(words)] = [tok.span] * len(words)
            return words, tok.span
        if tok.kind == "ident" and tok.text in ("true", "false", "nil"):
            self.i += 1
            return {"true": True, "false": False, "nil": None}[tok.text], tok.span
        if self.is_punct("-") and (nxt := self.at(1)) is not None and nxt.kind == "number":
            self.i += 2
            return -nxt.value, _join(tok.span, nxt.span)
        if self.is_punct("[") or self.is_punct("{"):
            return self.nested()
        return self.term()

    def nested(self) -> tuple[Any, Span]:
        """An array or a hash, at most `MAX_DEPTH` deep (the reader calls itself once per level)."""
        if self.depth >= MAX_DEPTH:
            raise Unreadable(f"a value is nested deeper than {MAX_DEPTH} levels")
        self.depth += 1
        try:
            return self.array() if self.is_punct("[") else self.hash()
        finally:
            self.depth -= 1

    def term(self) -> tuple[Any, Span]:
        """A name with its calls, subscripts and `.method`s (`ENV.fetch('X', 'y')`): opaque."""
        first = self.i
        if self.toks[first].kind == "punct" and self.toks[first].text in _OPEN:
            self.i += 1
            self.skip_until(frozenset({_OPEN[self.toks[first].text]}))
        self.i += 1
        while (tok := self.at()) is not None and tok.kind == "punct":
            if tok.text in ("(", "[") and _adjacent(self.toks[self.i - 1], tok):
                self.i += 1
                self.skip_until(frozenset({_OPEN[tok.text]}))
                self.i += 1
            elif tok.text in (".", "&.", "::") and self.at(1) is not None:
                self.i += 2
            else:
                break
        whole = _join(self.toks[first].span, self.toks[self.i - 1].span)
        return Tagged("!ruby", self.source(whole)), whole

    def array(self) -> tuple[list[Any], Span]:
        start = self.toks[self.i].span
        self.i += 1
        items: list[Any] = []
        spans: list[Span] = []
        stop = frozenset({",", "]"})
        while not self.is_punct("]"):
            if self.at() is None:
                raise Unreadable("an array is not closed")
            value, span = self.expr(stop)
            items.append(value)
            spans.append(span)
            if self.is_punct(","):
                self.i += 1
        end = self.toks[self.i].span
        self.i += 1
        self.table[id(items)] = spans
        return items, _join(start, end)

    def hash(self) -> tuple[dict[str, Any], Span]:
        start = self.toks[self.i].span
        self.i += 1
        data: dict[str, Any] = {}
        spans: dict[str, tuple[Span, Span]] = {}
        stop = frozenset({",", "}"})
        while not self.is_punct("}"):
            if self.at() is None:
                raise Unreadable("a hash is not closed")
            key, key_span = self.key()
            value, span = self.expr(stop)
            data[key] = value
            spans[key] = (key_span, span)
            self.keys.add(key)
            if self.is_punct(","):
                self.i += 1
        end = self.toks[self.i].span
        self.i += 1
        self.table[id(data)] = spans
        return data, _join(start, end)

    def key(self) -> tuple[str, Span]:
        tok = self.at()
        if tok is not None and tok.kind == "label":
            self.i += 1
            line, col, end_line, end_col = tok.span
            return str(tok.value), (line, col, end_line, end_col - 1)  # without the colon
        value, span = self.expr(frozenset({"=>", ",", "}"}))
        if self.is_punct("=>"):
            self.i += 1
        key = value if isinstance(value, str) else self.source(span)
        return str(key), span

    def source(self, span: Span) -> str:
        line, col, end_line, end_col = span
        if line == end_line:
            return self.lines[line - 1][col - 1 : end_col - 1]
        parts = [
            self.lines[line - 1][col - 1 :],
            *self.lines[line : end_line - 1],
            self.lines[end_line - 1][: end_col - 1],
        ]
        return "\n".join(parts)


def _adjacent(a: Tok, b: Tok) -> bool:
    return a.span[2] == b.span[0] and a.span[3] == b.span[1]


def _join(a: Span, b: Span) -> Span:
    return (a[0], a[1], b[2], b[3])


def adjacent(a: Tok, b: Tok) -> bool:
    """`x[` (a subscript) rather than `x [` (a call with an array argument)."""
    return _adjacent(a, b)
