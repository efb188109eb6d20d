"""A small tokenizer for the Ruby that Omnibus `gitlab.rb` files are written in; it runs nothing.

It knows what settings files use: identifiers, strings (single, double with `#{}` kept as text,
`%q()`/`%w[]` literals), symbols, `key:` labels, numbers, punctuation, comments, `=begin`
blocks and line continuations. A heredoc's body is skipped and marked, so the parser can warn
about that statement. An unterminated string becomes an `error` token for the rest of its line
and lexing goes on on the next line: a bad line never swallows the rest of the file. So does a
string of several lines that a word follows right after its closing quote (Ruby reads no such
thing: it is a quote left open that ran into the next `x['key']`).

Ruby API scripts have their own lexer (`scanner.readers.api.ruby`), and it stays apart: it
reads what this one skips (heredoc bodies, each with the offset of every character, `#{…}` as
unknown text) and does not read what this one reads (numbers, `%q()`/`%w[]` literals, labels,
strings across lines, more escapes, unterminated-literal warnings); its tokens carry offsets,
these carry line/column spans and the source text. Merging them would change what either reads.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from typing import Any

from scanner.core.tree import Span

MAX_DEPTH = 100  # nested `#{…}` in strings, arrays and hashes in values: as deep as YAML may nest


@dataclass(frozen=True, slots=True)
class Tok:
    kind: str  # ident const var label string symbol number words punct newline backtick heredoc error
    text: str  # the source text
    value: Any  # decoded value: str for strings/labels/symbols, int/float, list[str] for %w
    span: Span


_PUNCT = sorted(
    ["**=", "||=", "&&=", "<<=", ">>=", "<=>", "===", "...", "=>", "==", "!=", ">=", "<=", "&&", "||", "<<",
     ">>", "**", "::", "..", "+=", "-=", "*=", "/=", "%=", "|=", "&=", "^=", "=~", "!~", "->", "&."]
    + list("()[]{},.;:=+-*/%<>!&|^~?"),
    key=len,
    reverse=True,
)
_SPACE = re.compile(r"[ \t\r]+")
_PUNCT_RE = re.compile("|".join(map(re.escape, _PUNCT)))
_IDENT = re.compile(r"[a-z_][A-Za-z0-9_]*[?!]?|[A-Z][A-Za-z0-9_]*|[@$]{1,2}[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(r"0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO]?[0-7_]+(?![.\d])|\d[\d_]*(?:\.\d[\d_]*)?(?:[eE][+-]?\d+)?")
_HEREDOC = re.compile(r"<<([~-]?)(['\"`]?)([A-Za-z_][A-Za-z0-9_]*)\2")
_PAIRS = {"(": ")", "[": "]", "{": "}", "<": ">"}
_ESCAPES = {"n": "\n", "t": "\t", "s": " ", "r": "\r", "0": "\0", "e": "\x1b", "a": "\a", "b": "\b"}


class _Lexer:
    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.tokens: list[Tok] = []
        self.warnings: list[tuple[int, str]] = []
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.heredocs: list[tuple[str, bool]] = []  # terminators to skip after this line

    def pos(self, i: int) -> tuple[int, int]:
        line = bisect_right(self.starts, i)
        return line, i - self.starts[line - 1] + 1

    def add(self, kind: str, start: int, end: int, value: Any = None) -> None:
        self.tokens.append(Tok(kind, self.text[start:end], value, self.pos(start) + self.pos(end)))

    def run(self) -> None:
        text, n = self.text, len(self.text)
        while self.i < n:
            ch = text[self.i]
            if ch == "\n":
                self.add("newline", self.i, self.i + 1)
                self.i += 1
                self.skip_heredoc_bodies()
                if text.startswith("=begin", self.i):
                    self.skip_block_comment()
            elif ch in " \t\r":
                m = _SPACE.match(text, self.i)
                self.i = m.end() if m else self.i + 1
            elif ch == "\\" and text.startswith("\n", self.i + 1):
                self.i += 2  # continuation: the statement goes on
            elif ch == "#":
                end = text.find("\n", self.i)
                self.i = n if end < 0 else end
            else:
                self.token()

    def token(self) -> None:
        text, i = self.text, self.i
        ch = text[i]
        if ch in "'\"`":
            self.quoted(i, ch)
        elif ch == "%" and re.match(r"%[qQwWiI]?[(\[{<|!/]", text[i : i + 3]):
            self.percent(i)
        elif ch == ":" and re.match(r":(?:[A-Za-z_\"']|[+\-*/<=>!\[]$)", text[i : i + 2]) and self.symbol_ok():
            self.symbol(i)
        elif ch == "<" and (m := _HEREDOC.match(text, i)) and self.heredoc_ok():
            self.heredocs.append((m.group(3), m.group(1) != ""))
            self.add("heredoc", i, m.end(), m.group(3))
            self.i = m.end()
        elif m := _IDENT.match(text, i):
            end = m.end()
            if text.startswith(":", end) and not text.startswith("::", end) and (text[i].islower() or text[i] == "_"):
                self.add("label", i, end + 1, m.group(0))
                self.i = end + 1
            else:
                kind = "const" if text[i].isupper() else "var" if text[i] in "@$" else "ident"
                self.add(kind, i, end, m.group(0))
                self.i = end
        elif m := _NUMBER.match(text, i):
            try:
                number: Any = _number(m.group(0))
            except ValueError:  # more digits than Python converts: kept as written
                number = m.group(0)
            self.add("number", i, m.end(), number)
            self.i = m.end()
        else:
            m = _PUNCT_RE.match(text, i)
            op = m.group(0) if m else ch
            self.add("punct", i, i + len(op), op)
            self.i = i + len(op)

    def symbol_ok(self) -> bool:
        """`:name` is a symbol unless it follows an identifier or value directly (`a ? b :c`)."""
        prev = self.text[self.i - 1] if self.i else " "
        return not (prev.isalnum() or prev in "_)]}'\"")

    def heredoc_ok(self) -> bool:
        prev = self.tokens[-1] if self.tokens else None
        after_space = self.i > 0 and self.text[self.i - 1] in " \t(=,"
        return after_space and (prev is None or prev.kind != "ident" or prev.text in ("puts", "print"))

    def quoted(self, start: int, quote: str) -> None:
        end, value = _scan_string(self.text, start + 1, quote, interpolate=quote != "'")
        if end > 0 and _ends_in_a_word(self.text, start, end):
            end = -1  # a quote left open on its line: the "string" ran into the next `x['key']`
        if end < 0:
            self.unterminated(start, "string" if end == -1 else f"string (`#{{…}}` nested deeper than {MAX_DEPTH})")
            return
        kind = "backtick" if quote == "`" else "string"
        if kind == "string" and self.text.startswith(":", end) and not self.text.startswith("::", end):
            self.add("label", start, end + 1, value)  # `"key": value` in a hash
            self.i = end + 1
            return
        self.add(kind, start, end, value)
        self.i = end

    def percent(self, start: int) -> None:
        text = self.text
        letter = text[start + 1] if text[start + 1].isalpha() else "Q"
        open_at = start + (2 if text[start + 1].isalpha() else 1)
        opener = text[open_at]
        closer = _PAIRS.get(opener, opener)
        depth, j = 0, open_at + 1
        while j < len(text):
            c = text[j]
            if c == "\\":
                j += 2
                continue
            if c == opener and closer != opener:
                depth += 1
            elif c == closer:
                if depth == 0:
                    break
                depth -= 1
            j += 1
        if j >= len(text):
            self.unterminated(start, "%-literal")
            return
        body = text[open_at + 1 : j]
        if letter in "wWiI":
            self.add("words", start, j + 1, body.split())
        else:
            self.add("string", start, j + 1, body)
        self.i = j + 1

    def symbol(self, start: int) -> None:
        text = self.text
        if text[start + 1] in "'\"":
            end, value = _scan_string(text, start + 2, text[start + 1], interpolate=text[start + 1] == '"')
            if end < 0:
                self.unterminated(start, "symbol")
                return
        else:
            m = re.compile(r"[A-Za-z_][A-Za-z0-9_]*[?!=]?|\[\]=?|[+\-*/<=>!]+").match(text, start + 1)
            end = m.end() if m else start + 1
            value = text[start + 1 : end]
        self.add("symbol", start, end, value)
        self.i = end

    def unterminated(self, start: int, what: str) -> None:
        line, _ = self.pos(start)
        self.warnings.append((line, f"unterminated {what}; the rest of this line is not read"))
        end = self.text.find("\n", start)
        end = len(self.text) if end < 0 else end
        self.add("error", start, end)
        self.i = end

    def skip_heredoc_bodies(self) -> None:
        while self.heredocs:
            ident, indented = self.heredocs.pop(0)
            while self.i < len(self.text):
                end = self.text.find("\n", self.i)
                end = len(self.text) if end < 0 else end
                line = self.text[self.i : end]
                self.i = min(end + 1, len(self.text))
                if (line.strip() if indented else line.rstrip("\r")) == ident:
                    break

    def skip_block_comment(self) -> None:
        m = re.compile(r"^=end\b.*$", re.M).search(self.text, self.i)
        self.i = len(self.text) if m is None else m.end()


def _scan_string(text: str, j: int, quote: str, interpolate: bool, depth: int = 0) -> tuple[int, str]:
    """Read a quoted body from j; return the index after the closing quote (or -1, or -2 when
    interpolations nest deeper than `MAX_DEPTH`) and the value."""
    if depth > MAX_DEPTH:
        return -2, ""
    out: list[str] = []
    n = len(text)
    while j < n:
        c = text[j]
        if c == quote:
            return j + 1, "".join(out)
        if c == "\\" and j + 1 < n:
            nxt = text[j + 1]
            if interpolate:
                out.append(_ESCAPES.get(nxt, nxt if nxt != "\n" else ""))
            else:
                out.append(nxt if nxt in (quote, "\\") else "\\" + nxt)
            j += 2
            continue
        if interpolate and c == "#" and text.startswith("{", j + 1):
            end = _interpolation_end(text, j + 2, depth)
            if end < 0:
                return end, ""
            out.append(text[j:end])  # kept as written: `#{host}`
            j = end
            continue
        out.append(c)
        j += 1
    return -1, ""


def _ends_in_a_word(text: str, start: int, end: int) -> bool:
    """A string over several lines closed right before a word (`'…\nx['key` + `']`): Ruby reads no such
    thing, so it is a quote never closed on its first line, not a string of several lines."""
    return end < len(text) and (text[end].isalnum() or text[end] in "_'\"") and "\n" in text[start:end]


def _interpolation_end(text: str, j: int, level: int) -> int:
    depth = 0
    while j < len(text):
        c = text[j]
        if c == "{":
            depth += 1
        elif c == "}":
            if depth == 0:
                return j + 1
            depth -= 1
        elif c in "'\"":
            end, _ = _scan_string(text, j + 1, c, c == '"', level + 1)
            if end < 0:
                return end
            j = end
            continue
        j += 1
    return -1


def _number(text: str) -> int | float:
    clean = text.replace("_", "")
    if re.fullmatch(r"\d+\.\d+(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+", clean):
        return float(clean)
    if re.fullmatch(r"0[0-7]+", clean):
        return int(clean, 8)
    try:
        return int(clean, 0)
    except ValueError:  # `08`: Ruby rejects it; read it as written
        return int(clean, 10)


def tokenize(text: str) -> tuple[list[Tok], list[tuple[int, str]]]:
    """Tokens with spans, and lexing warnings `(line, message)`."""
    lexer = _Lexer(text)
    lexer.run()
    return lexer.tokens, lexer.warnings
