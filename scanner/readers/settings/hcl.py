"""A small reader of HCL (Terraform's language) for what settings need from a `.tf` file: a block's
attributes and nested blocks, with positions. It never executes anything: strings with `${…}` (nested),
heredocs, the three comment forms, lists, objects and calls; an expression it does not know is kept
whole as its source text (`var.token`, `"${var.tag}"` without its quotes), and so is one followed by an
operator. Nesting is bounded (`MAX_DEPTH`), and every loop moves forward: linear in the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from scanner.core.lines import LineIndex
from scanner.core.tree import Span

_IDENT = re.compile(r"[A-Za-z_][\w-]*")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")
_HEREDOC = re.compile(r"<<(-?)([A-Za-z_]\w*)[ \t]*\r?\n")
_SPACE = re.compile(r"(?:[ \t\r]+|#[^\n]*|//[^\n]*|/\*.*?\*/)+", re.S)
MAX_DEPTH = 100


class HclError(Exception):
    def __init__(self, message: str, at: int) -> None:
        super().__init__(message)
        self.at = at


@dataclass(slots=True)
class Heredoc:
    start: int  # offset of the body's first character
    end: int  # offset after the body's last line break


@dataclass(slots=True)
class Call:
    name: str
    args: list[tuple[Any, Span]] = field(default_factory=list)


@dataclass(slots=True)
class Block:
    type: str
    span: Span
    attrs: dict[str, tuple[Any, Span, Span]] = field(default_factory=dict)  # name → (value, name span, value span)
    blocks: list[Block] = field(default_factory=list)


class Reader:
    """Reads from `i`; `table` gets a position entry for each list and object read (`Tree.table`'s form)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.lines = LineIndex(text)
        self.depth = 0
        self.table: dict[int, Any] = {}

    def pos(self, i: int) -> tuple[int, int]:
        return self.lines.position(i)

    def span(self, a: int, b: int) -> Span:
        return self.pos(a) + self.pos(b)

    def blank(self, newlines: bool) -> None:
        while True:
            m = _SPACE.match(self.text, self.i)
            if m:
                self.i = m.end()
            if newlines and self.text.startswith("\n", self.i):
                self.i += 1
                continue
            if not m:
                return

    def body(self, start: int) -> Block:
        """A block's body from after its `{` to its `}`."""
        block = Block("", self.span(start, start))
        while True:
            self.blank(newlines=True)
            if self.i >= len(self.text):
                raise HclError("a block is never closed", start)
            if self.text[self.i] == "}":
                self.i += 1
                block.span = self.span(start, self.i)
                return block
            m = _IDENT.match(self.text, self.i)
            if m is None:
                raise HclError("expected an attribute or a block", self.i)
            name, name_at = m.group(), self.i
            self.i = m.end()
            self.blank(newlines=False)
            if self.text.startswith("=", self.i) and not self.text.startswith("==", self.i):
                self.i += 1
                self.blank(newlines=False)
                value_at = self.i
                value = self.expr()
                block.attrs[name] = (value, self.span(name_at, m.end()), self.span(value_at, self.i))
                continue
            while self.text.startswith('"', self.i):  # block labels
                self.string()
                self.blank(newlines=False)
            if not self.text.startswith("{", self.i):
                raise HclError(f"expected `=` or `{{` after `{name}`", self.i)
            self.i += 1
            inner = self.nested(lambda: self.body(self.i - 1))
            inner.type = name
            block.blocks.append(inner)

    def nested(self, read: Any) -> Any:
        if self.depth >= MAX_DEPTH:
            raise HclError(f"nested deeper than {MAX_DEPTH} levels", self.i)
        self.depth += 1
        try:
            return read()
        finally:
            self.depth -= 1

    def expr(self) -> Any:
        """One expression to the end of its line (or a `,`, `]`, `}` around it): a literal, a list, an
        object, a heredoc, a call; anything else (or followed by an operator) is its source text."""
        start = self.i
        value = self.primary()
        end = self.i
        self.blank(newlines=False)
        if self.i < len(self.text) and self.text[self.i] not in "\n,]})":
            self.skip_expr()
            source = self.text[start : self.i].rstrip()
            value, end = source, start + len(source)
        self.i = end  # the blanks after it are the caller's
        return value

    def primary(self) -> Any:
        text, i = self.text, self.i
        c = text[i : i + 1]
        if c == '"':
            return self.string()
        if text.startswith("<<", i) and (m := _HEREDOC.match(text, i)):
            return self.heredoc(m)
        if c == "[":
            return self.nested(self.list_)
        if c == "{":
            return self.nested(self.object_)
        if m := _NUMBER.match(text, i):
            self.i = m.end()
            return float(m.group()) if "." in m.group() or "e" in m.group().lower() else int(m.group())
        if m := _IDENT.match(text, i):
            word = m.group()
            self.i = m.end()
            if word in ("true", "false", "null"):
                return {"true": True, "false": False, "null": None}[word]
            if text.startswith("(", self.i):
                self.i += 1
                return self.nested(lambda: self.call(word))
            self.skip_expr()
            return text[i : self.i].strip()
        raise HclError("expected a value", i)

    def skip_expr(self) -> None:
        """To the end of the expression: brackets, strings and heredocs balanced, stopping at a line
        break, `,`, `]`, `}` or `)` outside them."""
        depth = 0
        while self.i < len(self.text):
            c = self.text[self.i]
            if c == '"':
                self.string()
                continue
            if self.text.startswith("<<", self.i) and (m := _HEREDOC.match(self.text, self.i)):
                self.heredoc(m)
                continue
            if c in "([{":
                depth += 1
            elif c in ")]}":
                if depth == 0:
                    return
                depth -= 1
            elif c in "\n," and depth == 0:
                return
            self.i += 1

    def string(self) -> str:
        """A quoted string; with `${…}` in it, its source text without the quotes."""
        text, start = self.text, self.i
        self.i += 1
        out: list[str] = []
        plain = True
        while self.i < len(text):
            c = text[self.i]
            if c == '"':
                self.i += 1
                return "".join(out) if plain else text[start + 1 : self.i - 1]
            if c == "\n":
                break
            if c == "\\":
                out.append({"n": "\n", "t": "\t", '"': '"', "\\": "\\"}.get(text[self.i + 1 : self.i + 2], ""))
                self.i += 2
                continue
            if text.startswith(("${", "%{"), self.i):
                plain = False
                self.interpolation()
                continue
            out.append(c)
            self.i += 1
        raise HclError("unterminated string", start)

    def interpolation(self) -> None:
        depth = 0
        self.i += 2
        while self.i < len(self.text) and self.text[self.i] != "\n":
            c = self.text[self.i]
            if c == '"':
                self.nested(self.string)
                continue
            if c == "{":
                depth += 1
            elif c == "}":
                if depth == 0:
                    self.i += 1
                    return
                depth -= 1
            self.i += 1
        raise HclError("unterminated `${`", self.i)

    def heredoc(self, m: re.Match[str]) -> Heredoc:
        indented, word = m.group(1) == "-", m.group(2)
        end = re.compile(rf"(?m)^[ \t]*{re.escape(word)}[ \t]*\r?$" if indented else rf"(?m)^{re.escape(word)}\r?$")
        found = end.search(self.text, m.end())
        if found is None:
            raise HclError(f"heredoc `{word}` is never closed", m.start())
        self.i = found.end()
        return Heredoc(m.end(), found.start())

    def list_(self) -> list[Any]:
        self.i += 1
        items, spans = self.sequence("]")
        self.table[id(items)] = spans
        return items

    def object_(self) -> dict[str, Any]:
        self.i += 1
        obj: dict[str, Any] = {}
        spans: dict[str, tuple[Span, Span]] = {}
        while True:
            self.blank(newlines=True)
            if self.text.startswith("}", self.i):
                self.i += 1
                self.table[id(obj)] = spans
                return obj
            key_at = self.i
            if self.text.startswith('"', self.i):
                key = self.string()
            elif m := _IDENT.match(self.text, self.i):
                key, self.i = m.group(), m.end()
            else:
                raise HclError("expected a key", self.i)
            key_span = self.span(key_at, self.i)
            self.blank(newlines=False)
            if self.text[self.i : self.i + 1] not in ("=", ":"):
                raise HclError("expected `=` or `:` after a key", self.i)
            self.i += 1
            self.blank(newlines=False)
            value_at = self.i
            obj[key] = self.expr()
            spans[key] = (key_span, self.span(value_at, self.i))
            self.blank(newlines=True)
            if self.text.startswith(",", self.i):
                self.i += 1

    def call(self, name: str) -> Call:
        items, spans = self.sequence(")")
        return Call(name, list(zip(items, spans, strict=True)))

    def sequence(self, closer: str) -> tuple[list[Any], list[Span]]:
        """Expressions separated by commas up to `closer` (a list's items, a call's arguments)."""
        items: list[Any] = []
        spans: list[Span] = []
        while True:
            self.blank(newlines=True)
            if self.text.startswith(closer, self.i):
                self.i += 1
                return items, spans
            at = self.i
            items.append(self.expr())
            spans.append(self.span(at, self.i))
            self.blank(newlines=True)
            if self.text.startswith(",", self.i):
                self.i += 1
            elif not self.text.startswith(closer, self.i):
                raise HclError(f"expected `,` or `{closer}`", self.i)
