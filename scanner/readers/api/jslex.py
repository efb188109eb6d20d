"""A small JavaScript/TypeScript lexer for `scanner.readers.api.jssource`: comments skipped, string and
template literals read with the source offset of every character, regex literals skipped. Its
tokens (`scanner.readers.api.tokens.Tok`) are those of the Ruby script lexer."""

from __future__ import annotations

import re

from scanner.readers.api.tokens import Tok, interpolation_end

_IDENT = re.compile(r"[A-Za-z_$][\w$]*")
_ESC = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}
_REGEX_AFTER = set("(,=:[!&|?{};+-*%<>~^") | {""}


def _literal(text: str, i: int) -> Tok:
    quote, j = text[i], i + 1
    out: list[str] = []
    offs: list[int] = []
    exprs: list[str] = []
    while j < len(text) and text[j] != quote:
        if text[j] == "\\" and j + 1 < len(text):
            out.append(_ESC.get(text[j + 1], text[j + 1]))
            offs.append(j)
            j += 2
        elif quote == "`" and text.startswith("${", j):
            k = interpolation_end(text, j)
            exprs.append(text[j + 2 : k - 1])
            out.append("\0" * (k - j))  # an interpolation: unknown text of the same length
            offs.extend(range(j, k))
            j = k
        elif text[j] == "\n" and quote != "`":
            break
        else:
            out.append(text[j])
            offs.append(j)
            j += 1
    return Tok("str", i, j + 1, "".join(out), offs, exprs)


def _regex_may_start(toks: list[Tok]) -> bool:
    """A `/` after an operator or at the start is a regex literal, after a value a division."""
    return not toks or (toks[-1].kind == "p" and toks[-1].value in _REGEX_AFTER)


def lex(text: str) -> list[Tok]:
    toks: list[Tok] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c in " \t\r\n":
            i += 1
        elif text.startswith("//", i):
            i = text.find("\n", i) % (len(text) + 1) if "\n" in text[i:] else len(text)
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = len(text) if end < 0 else end + 2
        elif c in "'\"`":
            toks.append(_literal(text, i))
            i = toks[-1].end
        elif c == "/" and _regex_may_start(toks):
            m = re.compile(r"/(?:\\.|\[(?:\\.|[^\]])*\]|[^/\\\n])+/[a-z]*").match(text, i)
            i = m.end() if m else i + 1
        elif m := _IDENT.match(text, i):
            toks.append(Tok("id", i, m.end(), m.group(0)))
            i = m.end()
        else:
            toks.append(Tok("p", i, i + 1, c))
            i += 1
    return toks
