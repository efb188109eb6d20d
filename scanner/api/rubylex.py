"""A small Ruby lexer for `scanner.api.rubysource`: what API scripts need, nothing executed.

Comments (`#`, `=begin`/`=end`) are skipped. String literals (`'…'`, `"…"`, one line each) and
heredoc bodies (`<<~ID`, `<<-ID`, `<<ID`, quoted or not) become `str` tokens with the source
offset of every character of their value; `#{…}` in a double-quoted string or an unquoted
heredoc is unknown text (NUL characters) and its source is kept in `exprs`. Everything else is
an identifier (`id`: names, constants, `@ivars`, `$globals`, `:symbols` without the colon) or
one punctuation character (`p`). It never fails: text it does not understand is punctuation.
"""

from __future__ import annotations

import re

from scanner.api.jslex import Tok

_IDENT = re.compile(r"[@$]{0,2}[A-Za-z_][\w]*[?!]?")
_HEREDOC = re.compile(r"<<([~-]?)(['\"]?)([A-Za-z_]\w*)\2")
_ESC = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "s": " "}


def _interpolation_end(text: str, j: int) -> int:
    """Index after the `}` closing the `#{` at `j`."""
    depth, k = 1, j + 2
    while k < len(text) and depth:
        depth += {"{": 1, "}": -1}.get(text[k], 0)
        k += 1
    return k


def _single(esc: str) -> str:
    """A backslash escape in single quotes: only `\\'` and `\\\\` are escapes there."""
    return esc if esc in "'\\" else "\\" + esc


def _string(text: str, i: int) -> Tok:
    """A quoted literal on one line (an unclosed one ends at the end of its line)."""
    quote, j = text[i], i + 1
    out: list[str] = []
    offs: list[int] = []
    exprs: list[str] = []
    while j < len(text) and text[j] not in (quote, "\n"):
        if text[j] == "\\" and j + 1 < len(text) and text[j + 1] != "\n":
            esc = text[j + 1]
            value = _single(esc) if quote == "'" else _ESC.get(esc, esc)
            out.append(value)
            offs.extend([j] * len(value))
            j += 2
        elif quote == '"' and text.startswith("#{", j):
            k = _interpolation_end(text, j)
            exprs.append(text[j + 2 : k - 1])
            out.append("\0" * (k - j))
            offs.extend(range(j, k))
            j = k
        else:
            out.append(text[j])
            offs.append(j)
            j += 1
    return Tok("str", i, j + 1, "".join(out), offs, exprs)


def _heredoc_body(text: str, start: int, name: str, squiggly: bool, raw: bool) -> tuple[Tok, int]:
    """The body of a heredoc whose lines start at `start`; the token and the index after its end."""
    out: list[str] = []
    offs: list[int] = []
    exprs: list[str] = []
    i = start
    while i < len(text):
        end = text.find("\n", i)
        end = len(text) if end < 0 else end
        line = text[i:end]
        if line.strip() == name and (squiggly or line == name or line.lstrip() == name):
            return Tok("str", start, end, "".join(out), offs, exprs), end
        j = i
        while j < end:
            if not raw and text.startswith("#{", j):
                k = min(_interpolation_end(text, j), end)
                exprs.append(text[j + 2 : k - 1])
                out.append("\0" * (k - j))
                offs.extend(range(j, k))
                j = k
            else:
                out.append(text[j])
                offs.append(j)
                j += 1
        out.append("\n")
        offs.append(end)
        i = end + 1
    return Tok("str", start, len(text), "".join(out), offs, exprs), len(text)


def lex(text: str) -> list[Tok]:
    toks: list[Tok] = []
    pending: list[tuple[Tok, str, bool, bool]] = []  # heredocs opened on this line: bodies follow it
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\n":
            i += 1
            for placeholder, name, squiggly, raw in pending:
                body, i = _heredoc_body(text, i, name, squiggly, raw)
                placeholder.value, placeholder.offsets, placeholder.exprs = body.value, body.offsets, body.exprs
                i = min(i + 1, len(text))
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
            pending.append((toks[-1], m.group(3), m.group(1) == "~", m.group(2) == "'"))
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
