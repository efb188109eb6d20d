"""TOML with positions, for GitLab Runner's `config.toml`.

The standard library's `tomllib` gives no positions and gives up on the first error, so this
is a small reader of TOML 1.0: tables, arrays of tables (`[[runners]]`), dotted and quoted
keys, the four string forms, numbers, booleans, dates (kept as text), arrays and inline
tables. Values match what `tomllib` returns (tests compare the two). A line it cannot read is
a warning and reading goes on at the next line that starts a key or a table.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import Any

from scanner.core.tree import ParseError, Span, Tree

NUMBER = re.compile(
    r"[+-]?(?:0x[0-9A-Fa-f_]+|0o[0-7_]+|0b[01_]+|inf|nan"
    r"|(?:0|[1-9][0-9_]*)(?:\.[0-9_]+)?(?:[eE][+-]?[0-9_]+)?)"
)
DATE = re.compile(
    r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})?)?|\d{2}:\d{2}:\d{2}(?:\.\d+)?"
)
ESC = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "\\": "\\", "e": "\x1b"}
MAX_DEPTH = 100  # as deep as a YAML document may nest (scanner.readers.yamldoc)


def number(text: str) -> int | float:
    clean = text.replace("_", "")
    body = clean.lstrip("+-")
    if body in ("inf", "nan"):
        return float(clean)
    if body[:2] in ("0x", "0o", "0b"):
        value = int(body, 0)
        return -value if clean.startswith("-") else value
    if any(c in body for c in ".eE"):
        return float(clean)
    return int(clean)


_BARE = re.compile(r"[A-Za-z0-9_-]+")
_RESYNC = re.compile(r"^[ \t]*(?:\[|[A-Za-z0-9_\"'-]+[ \t]*[.=])", re.M)
_BLANK = re.compile(r"(?:[ \t\r]|#[^\n]*)+")
_BLANK_LINES = re.compile(r"(?:[ \t\r\n]|#[^\n]*)+")


class TomlError(Exception):
    def __init__(self, message: str, at: int) -> None:
        super().__init__(message)
        self.message = message
        self.at = at


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.root: dict[str, Any] = {}
        self.tree = Tree(roots=[self.root], root_spans=[(1, 1, len(self.starts), 1)])
        self.tree.table[id(self.root)] = {}
        self.current = self.root
        self.depth = 0  # arrays and inline tables open around the value being read

    def pos(self, i: int) -> tuple[int, int]:
        line = bisect_right(self.starts, i)
        return line, i - self.starts[line - 1] + 1

    def span(self, a: int, b: int) -> Span:
        return self.pos(a) + self.pos(b)

    def run(self) -> None:
        while True:
            self.blank(newlines=True)
            if self.i >= len(self.text):
                return
            try:
                self.statement()
            except TomlError as exc:
                self.tree.warnings.append((self.pos(exc.at)[0], f"TOML not read: {exc.message}"))
                after = self.text.find("\n", exc.at)
                m = _RESYNC.search(self.text, len(self.text) if after < 0 else after + 1)
                self.i = m.start() if m else len(self.text)

    def statement(self) -> None:
        if self.text.startswith("[", self.i):
            self.header()
        else:
            parts = self.key()
            self.blank()
            self.expect("=")
            self.blank()
            value, span = self.value()
            self.assign(self.current, parts, value, span)
        self.blank()
        if self.i < len(self.text) and self.text[self.i] != "\n":
            raise TomlError("unexpected text after the value", self.i)

    def blank(self, newlines: bool = False) -> None:
        """Skip spaces and comments (and newlines, between statements and in arrays)."""
        m = (_BLANK_LINES if newlines else _BLANK).match(self.text, self.i)
        if m:
            self.i = m.end()

    def expect(self, token: str) -> None:
        if not self.text.startswith(token, self.i):
            raise TomlError(f"expected `{token}`", self.i)
        self.i += len(token)

    def header(self) -> None:
        start = self.i
        many = self.text.startswith("[[", self.i)
        self.i += 2 if many else 1
        self.blank()
        parts = self.key()
        self.blank()
        self.expect("]]" if many else "]")
        whole = self.span(start, self.i)
        table = self.root
        for name, span in parts[:-1]:
            table = self.descend(table, name, span, whole)
        name, span = parts[-1]
        if many:
            items = table.get(name)
            if not isinstance(items, list):
                items = []
                self.tree.table[id(items)] = []
                self.put(table, name, span, items, whole)
            new: dict[str, Any] = {}
            self.tree.table[id(new)] = {}
            items.append(new)
            self.tree.table[id(items)].append(whole)
            self.current = new
        else:
            self.current = self.descend(table, name, span, whole)

    def descend(self, table: dict[str, Any], name: str, span: Span, whole: Span) -> dict[str, Any]:
        value = table.get(name)
        if isinstance(value, list) and value and isinstance(value[-1], dict):
            return value[-1]
        if isinstance(value, dict):
            return value
        if value is not None:
            raise TomlError(f"`{name}` is already a value, not a table", self.i)
        new: dict[str, Any] = {}
        self.tree.table[id(new)] = {}
        self.put(table, name, span, new, whole)
        return new

    def put(self, table: dict[str, Any], name: str, key_span: Span, value: Any, span: Span) -> None:
        table[name] = value
        self.tree.table[id(table)][name] = (key_span, span)
        self.tree.keys.add(name)

    def assign(self, table: dict[str, Any], parts: list[tuple[str, Span]], value: Any, span: Span) -> None:
        for name, key_span in parts[:-1]:
            table = self.descend(table, name, key_span, span)
        self.put(table, parts[-1][0], parts[-1][1], value, span)

    def key(self) -> list[tuple[str, Span]]:
        parts: list[tuple[str, Span]] = []
        while True:
            start = self.i
            c = self.text[self.i : self.i + 1]
            if c in ('"', "'"):
                name = self.string()
            else:
                m = _BARE.match(self.text, self.i)
                if not m:
                    raise TomlError("expected a key", self.i)
                name = m.group(0)
                self.i = m.end()
            parts.append((name, self.span(start, self.i)))
            self.blank()
            if not self.text.startswith(".", self.i):
                return parts
            self.i += 1
            self.blank()

    def value(self) -> tuple[Any, Span]:
        start = self.i
        text = self.text
        c = text[self.i : self.i + 1]
        if c in ('"', "'"):
            value: Any = self.string()
        elif c in ("[", "{"):
            value = self.nested(c)
        elif text.startswith(("true", "false"), self.i):
            value = text.startswith("true", self.i)
            self.i += 4 if value else 5
        elif m := DATE.match(text, self.i):
            value = m.group(0)
            self.i = m.end()
        elif m := NUMBER.match(text, self.i):
            try:
                value = number(m.group(0))
            except ValueError:  # an integer of more digits than Python converts
                raise TomlError("number too long", self.i) from None
            self.i = m.end()
        else:
            raise TomlError("expected a value", self.i)
        return value, self.span(start, self.i)

    def nested(self, opener: str) -> Any:
        """An array or inline table, at most `MAX_DEPTH` deep (a loop of calls, one per level)."""
        if self.depth >= MAX_DEPTH:
            raise TomlError(f"value nested deeper than {MAX_DEPTH} levels", self.i)
        self.depth += 1
        try:
            return self.array() if opener == "[" else self.inline_table()
        finally:
            self.depth -= 1

    def string(self) -> str:
        text, quote = self.text, self.text[self.i]
        multi = text.startswith(quote * 3, self.i)
        self.i += 3 if multi else 1
        if multi and text.startswith("\n", self.i):
            self.i += 1
        elif multi and text.startswith("\r\n", self.i):
            self.i += 2
        out: list[str] = []
        while self.i < len(text):
            c = text[self.i]
            if text.startswith(quote * 3 if multi else quote, self.i):
                self.i += 3 if multi else 1
                while multi and text.startswith(quote, self.i):
                    out.append(quote)  # up to two quotes may end a multi-line string
                    self.i += 1
                return "".join(out)
            if c == "\n" and not multi:
                break
            if c == "\\" and quote == '"':
                self.escape(out, multi)
                continue
            out.append(c)
            self.i += 1
        raise TomlError("unterminated string", self.i)

    def escape(self, out: list[str], multi: bool) -> None:
        text = self.text
        nxt = text[self.i + 1 : self.i + 2]
        if multi and nxt in ("\n", " ", "\t", "\r"):
            m = re.compile(r"\\[ \t\r]*\n[ \t\r\n]*").match(text, self.i)
            if m:
                self.i = m.end()
                return
        if nxt in ("u", "U"):
            size = 4 if nxt == "u" else 8
            digits = text[self.i + 2 : self.i + 2 + size]
            if not re.fullmatch(r"[0-9A-Fa-f]+", digits) or len(digits) != size or int(digits, 16) > 0x10FFFF:
                raise TomlError("bad unicode escape", self.i)
            out.append(chr(int(digits, 16)))
            self.i += 2 + size
            return
        if nxt not in ESC:
            raise TomlError(f"unknown escape `\\{nxt}`", self.i)
        out.append(ESC[nxt])
        self.i += 2

    def array(self) -> list[Any]:
        self.i += 1
        items: list[Any] = []
        spans: list[Span] = []
        while True:
            self.blank(newlines=True)
            if self.text.startswith("]", self.i):
                self.i += 1
                self.tree.table[id(items)] = spans
                return items
            value, span = self.value()
            items.append(value)
            spans.append(span)
            self.blank(newlines=True)
            if self.text.startswith(",", self.i):
                self.i += 1
            elif not self.text.startswith("]", self.i):
                raise TomlError("expected `,` or `]` in an array", self.i)

    def inline_table(self) -> dict[str, Any]:
        self.i += 1
        table: dict[str, Any] = {}
        self.tree.table[id(table)] = {}
        self.blank()
        if self.text.startswith("}", self.i):
            self.i += 1
            return table
        while True:
            self.blank()
            parts = self.key()
            self.blank()
            self.expect("=")
            self.blank()
            value, span = self.value()
            self.assign(table, parts, value, span)
            self.blank()
            if self.text.startswith("}", self.i):
                self.i += 1
                return table
            self.expect(",")


def load_toml(text: str) -> Tree:
    """The document as one mapping with positions; unreadable lines become `Tree.warnings`."""
    reader = _Reader(text)
    reader.run()
    tree = reader.tree
    if not reader.root and tree.warnings:
        line, message = tree.warnings[0]
        raise ParseError(message, line)
    return tree
