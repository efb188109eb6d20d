"""A small Ruby lexer for `scanner.readers.api.rubysource`: what API scripts need, nothing executed.

Comments (`#`, `=begin`/`=end`) are skipped. String literals (`'…'`, `"…"`, one line each) and
heredoc bodies (`<<~ID`, `<<-ID`, `<<ID`, quoted or not) become `str` tokens with the source
offset of every character of their value; `#{…}` in a double-quoted string or an unquoted
heredoc is unknown text (NUL characters) and its source is kept in `exprs`. Everything else is
an identifier (`id`: names, constants, `@ivars`, `$globals`, `:symbols` without the colon) or
one punctuation character (`p`). It never fails: text it does not understand is punctuation.

Its tokens are the JavaScript lexer's (`scanner.readers.api.tokens`). The `gitlab.rb` lexer
(`scanner.readers.settings.ruby`) reads the same language for another purpose; that module
says why the two stay apart.
"""

from __future__ import annotations

import re

from scanner.readers.api.tokens import Tok, interpolation_end

_IDENT = re.compile(r"[@$]{0,2}[A-Za-z_][\w]*[?!]?")
_HEREDOC = re.compile(r"<<([~-]?)(['\"]?)([A-Za-z_]\w*)\2")
_ESC = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "s": " "}


def _single(esc: str) -> str:
    """A backslash escape in single quotes: only `\\'` and `\\\\` are escapes there."""
    return esc if esc in "'\\" else "\\" + esc


class _Value:
    """A literal's value as it is read: characters with their source offsets, `#{…}` as NULs."""

    def __init__(self) -> None:
        self.chars: list[str] = []
        self.offsets: list[int] = []
        self.exprs: list[str] = []

    def add(self, value: str, offset: int) -> None:
        self.chars.append(value)
        self.offsets.extend([offset] * len(value))

    def interpolation(self, text: str, j: int, limit: int) -> int:
        """Read the `#{…}` at `j` (not past `limit`); the index after it."""
        k = min(interpolation_end(text, j), limit)
        self.exprs.append(text[j + 2 : k - 1])
        self.chars.append("\0" * (k - j))
        self.offsets.extend(range(j, k))
        return k

    def token(self, start: int, end: int) -> Tok:
        return Tok("str", start, end, "".join(self.chars), self.offsets, self.exprs)


def _string(text: str, i: int) -> Tok:
    """A quoted literal on one line (an unclosed one ends at the end of its line)."""
    quote, j = text[i], i + 1
    value = _Value()
    while j < len(text) and text[j] not in (quote, "\n"):
        if text[j] == "\\" and j + 1 < len(text) and text[j + 1] != "\n":
            esc = text[j + 1]
            value.add(_single(esc) if quote == "'" else _ESC.get(esc, esc), j)
            j += 2
        elif quote == '"' and text.startswith("#{", j):
            j = value.interpolation(text, j, len(text))
        else:
            value.add(text[j], j)
            j += 1
    return value.token(i, j + 1)


def _heredoc_body(text: str, start: int, name: str, raw: bool) -> tuple[Tok, int]:
    """The body of a heredoc whose lines start at `start`; the token and the index of its
    terminator line's end (an indented terminator is accepted whatever the heredoc's form)."""
    value = _Value()
    i = start
    while i < len(text):
        end = text.find("\n", i)
        end = len(text) if end < 0 else end
        if text[i:end].strip() == name:
            return value.token(start, end), end
        j = i
        while j < end:
            if not raw and text.startswith("#{", j):
                j = value.interpolation(text, j, end)
            else:
                value.add(text[j], j)
                j += 1
        value.add("\n", end)
        i = end + 1
    return value.token(start, len(text)), len(text)


def _heredoc_bodies(text: str, i: int, pending: list[tuple[Tok, str, bool]]) -> int:
    """Read the bodies of the heredocs opened on the line before `i`, in order, into their
    placeholder tokens; the index after the last body's terminator line."""
    for placeholder, name, raw in pending:
        body, i = _heredoc_body(text, i, name, raw)
        placeholder.value, placeholder.offsets, placeholder.exprs = body.value, body.offsets, body.exprs
        i = min(i + 1, len(text))
    return i


def lex(text: str) -> list[Tok]:
    toks: list[Tok] = []
    pending: list[tuple[Tok, str, bool]] = []  # heredocs opened on this line: bodies follow it
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\n":
            i = _heredoc_bodies(text, i + 1, pending)
            pending = []
        elif c in " \t\r\\":
            i += 1
        elif c == "#":
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
        elif text.startswith("=begin", i) and (i == 0 or text[i - 1] == "\n"):
            end = text.find("\n=end", i)
            i = len(text) if end < 0 else end + 5
        elif c in "'\"":
            toks.append(_string(text, i))
            i = toks[-1].end
        elif c == "<" and (m := _HEREDOC.match(text, i)) and (not toks or toks[-1].kind == "p"
                                                             or toks[-1].value in ("puts", "return")):
            toks.append(Tok("str", i, m.end(), ""))
            pending.append((toks[-1], m.group(3), m.group(2) == "'"))
            i = m.end()
        elif text.startswith("::", i):
            toks.append(Tok("p", i, i + 2, "::"))
            i += 2
        elif c == ":" and (m := _IDENT.match(text, i + 1)) and text[i + 1 : i + 2] not in ("@", "$"):
            toks.append(Tok("id", i + 1, m.end(), m.group(0)))  # a symbol: `:active`
            i = m.end()
        elif m := _IDENT.match(text, i):
            toks.append(Tok("id", i, m.end(), m.group(0)))
            i = m.end()
        else:
            toks.append(Tok("p", i, i + 1, c))
            i += 1
    return toks
