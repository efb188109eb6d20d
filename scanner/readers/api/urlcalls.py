"""What the JavaScript and Ruby extractors share: a REST call from a URL built out of source
text, and how a string literal is recognised as a GraphQL document."""

from __future__ import annotations

import re
from collections.abc import Callable

from scanner.readers.api.model import GraphqlText, Param, RestCall
from scanner.readers.api.paths import api_url, query_pairs
from scanner.readers.api.tokens import Tok

GRAPHQL_TEXT = re.compile(r"\s*(?:query|mutation|subscription|fragment)\b[^{}]*\{")
Pos = Callable[[int], tuple[int, int]]  # a source offset → (line, column)


def rest_call(method: str, url: str, offs: list[int | None], fallback: int, pos: Pos,
              params: list[Param]) -> RestCall | None:
    """The call to `url` (each character's source offset in `offs`, None where not written in
    the file), or None when it is not a REST v4 URL. The path is placed at its first written
    character (else at `fallback`); query parameters at theirs."""
    parts = api_url(url)
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
