"""What the JavaScript and Ruby readers share: the token their lexers produce, the scanning step
for `${…}` / `#{…}` interpolations, a REST call from a URL built out of lexed literals, and how a
string literal is recognised as a GraphQL document.

A literal's token carries the source offset of each character of its value, so a path or a
GraphQL field found inside it is placed exactly, whatever escapes or interpolations it holds.

The Omnibus `gitlab.rb` reader has its own lexer and token (`scanner.readers.settings.ruby`):
it reads a settings file as statements and values, so its tokens carry line/column spans and
the source text, keep `#{…}` as written, read strings across lines, skip heredoc bodies and
report unterminated literals as warnings; a Ruby API script needs none of that, but needs each
character's offset and heredoc bodies read. One token for both would make every token of
either lexer carry fields it never uses.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from scanner.readers.api.model import GraphqlText, Param, RestCall
from scanner.readers.api.paths import api_base_url, query_pairs


@dataclass(slots=True)
class Tok:
    kind: str  # str | id | p (punctuation) | num
    start: int
    end: int
    value: str
    offsets: list[int] = field(default_factory=list)  # for literals: source offset of each value char
    exprs: list[str] = field(default_factory=list)  # for interpolations: the text of each ${...} / #{...}


def interpolation_end(text: str, j: int, limit: int | None = None) -> int:
    """Index after the `}` closing the `${` or `#{` at `j` (braces counted, strings not read);
    `limit` (the end of the text) when it is not closed before it."""
    end = len(text) if limit is None else min(limit, len(text))
    depth, k = 1, j + 2
    while k < end and depth:
        depth += {"{": 1, "}": -1}.get(text[k], 0)
        k += 1
    return k


GRAPHQL_TEXT = re.compile(r"\s*(?:query|mutation|subscription|fragment)\b[^{}]*\{")
Pos = Callable[[int], tuple[int, int]]  # a source offset → (line, column)


def rest_call(method: str, url: str, offs: list[int | None], fallback: int, pos: Pos,
              params: list[Param]) -> RestCall | None:
    """The call to `url` (each character's source offset in `offs`, None where not written in
    the file), or None when it is not a REST v4 URL. The path is placed at its first written
    character (else at `fallback`); query parameters at theirs."""
    parts = api_base_url(url)
    if parts is None:
        return None
    at = next((o for o in offs[parts.path_at :] if o is not None), fallback)
    line, col = pos(at)
    call = RestCall(method, parts.path, (line, col, line, col + len(parts.path)))
    call.params.extend(params)
    for name, qat, value in query_pairs(parts.query):
        off = offs[parts.query_at + qat] if parts.query_at + qat < len(offs) else None
        qline, qcol = pos(off if off is not None else at)
        call.params.append(Param(name, (qline, qcol, qline, qcol + len(name)), value))
    return call


def document(tk: Tok, pos: Pos, variables: tuple[str, ...] = ()) -> GraphqlText:
    """A string literal read as a GraphQL document (an interpolation reads as spaces)."""
    return GraphqlText(tk.value.replace("\0", " "), tuple(pos(o) for o in tk.offsets), variables)
