"""One HTTP client command → a REST call or a GraphQL request.

`shellclients` reads the client's own flags; this module decides whether the URL is the
GitLab REST v4 or GraphQL API, and turns bodies (`key=value&…`, JSON), form fields, httpie
and glab items and query strings into request fields with their exact positions.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import unquote_plus

from scanner.core.tree import Span
from scanner.readers.api.model import UNKNOWN, GraphqlText, Param, RestCall
from scanner.readers.api.paths import api_url, is_graphql_url, query_pairs
from scanner.readers.api.shellclients import PARSERS, Request
from scanner.readers.api.shellwords import (
    Chars,
    json_key_offset,
    json_object,
    json_string_value,
    span_in,
    word_chars,
)
from scanner.readers.shell import ScriptText, Token

CLIENTS = frozenset({"curl", "wget", "http", "https", "xh", "xhs", "glab"})


@dataclass(frozen=True, slots=True)
class Bases:
    """Variable names known to hold the REST base URL (`$GITLAB_API`) or the GraphQL URL."""

    rest: frozenset[str] = frozenset()
    graphql: frozenset[str] = frozenset()


@dataclass(slots=True)
class ShellCall:
    rest: RestCall | None = None
    graphql: GraphqlText | None = None
    out_file: str | None = None


def _literal(text: str, typed: bool) -> object:
    """`-F active=false` (glab) and `active:=false` (httpie) send JSON types; others send strings."""
    if not typed:
        return text
    return {"true": True, "false": False, "null": None}.get(text, int(text) if text.isdigit() else text)


def _pairs_params(chars: Chars, start: int) -> list[Param]:
    text = chars[0][start:]
    stripped = text.lstrip()
    if stripped.startswith("@"):
        return []
    if stripped.startswith("{"):
        obj = json_object(text) or {}
        return [Param(k, span_in(chars, start + json_key_offset(text, k), len(k)), v) for k, v in obj.items()]
    return [Param(n, span_in(chars, start + at, len(n)), unquote_plus(v)) for n, at, v in query_pairs(text)]


def _graphql_query(chars: Chars, start: int, json_body: bool) -> GraphqlText | None:
    text = chars[0][start:]
    if json_body:
        found = json_string_value(text, "query")
        if found is None:
            return None
        value, idx = found
        variables = (json_object(text) or {}).get("variables")
        return GraphqlText(value, tuple(chars[1][start + i] for i in idx), tuple(key_paths(variables)))
    return GraphqlText(text, chars[1][start:])


def key_paths(value: object, prefix: str = "") -> Iterator[str]:
    """`a`, `a.b`, … for every key of a JSON object, nested objects included (not inside lists)."""
    if isinstance(value, dict):
        for key, child in value.items():
            yield prefix + str(key)
            yield from key_paths(child, prefix + str(key) + ".")


def _redirects(args: list[Token]) -> tuple[list[Token], str | None]:
    """Drop `> FILE`, `>> FILE`, `< FILE` from the arguments; return the output file."""
    kept: list[Token] = []
    target: str | None = None
    k = 0
    while k < len(args):
        t = args[k].text
        if t in (">", ">>", "1>", "<", "2>") and k + 1 < len(args):
            target = args[k + 1].text if t != "<" and t != "2>" else target
            k += 2
            continue
        if t.startswith((">", "1>")) and not t.endswith("&1"):
            target = t.lstrip("1>")
        elif not t.startswith(("2>", "<")):
            kept.append(args[k])
        k += 1
    return kept, target


def parse_call(program: str, args: list[Token], script: ScriptText, bases: Bases) -> ShellCall | None:
    """The API request made by `program args...`, or None when it is not a GitLab API call."""
    args, redirected = _redirects(args)
    req = PARSERS[program](args)
    req.out_file = req.out_file or redirected
    if req.url is None:
        return None
    url = word_chars(script, req.url)
    if program == "glab":
        if url[0] == "graphql":
            return _graphql_request(req, script)
        endpoint, _, query = url[0].partition("?")
        path = "/" + endpoint.lstrip("/")
        return _rest(req, path, span_in(url, 0, len(endpoint)), url, query, len(endpoint) + 1, script)
    if is_graphql_url(url[0], bases.graphql):
        return _graphql_request(req, script)
    parts = api_url(url[0], bases.rest)
    if parts is None:
        return None
    span = span_in(url, parts.path_at, len(parts.path))
    return _rest(req, parts.path, span, url, parts.query, parts.query_at, script)


def _graphql_request(req: Request, script: ScriptText) -> ShellCall:
    for w, at in req.bodies:
        if (gql := _graphql_query(word_chars(script, w), at, json_body=True)) is not None:
            return ShellCall(graphql=gql, out_file=req.out_file)
    for w, name, _, at in req.items:
        if name == "query":
            return ShellCall(graphql=_graphql_query(word_chars(script, w), at, json_body=False), out_file=req.out_file)
    return ShellCall(out_file=req.out_file)


def _rest(req: Request, path: str, span: Span, url: Chars, query: str, query_at: int, script: ScriptText) -> ShellCall:
    method = req.method or ("GET" if req.get or not (req.bodies or req.forms) else "POST")
    call = RestCall(method, path, span)
    for w, at in req.bodies:
        call.params.extend(_pairs_params(word_chars(script, w), at))
    for w, at in req.forms:
        chars = word_chars(script, w)
        name, _, value = chars[0][at:].partition("=")
        call.params.append(Param(name, span_in(chars, at, len(name)), UNKNOWN if value.startswith("@") else value))
    for w, name, sep, at in req.items:
        if sep in ("==", "=", ":="):
            chars = word_chars(script, w)
            call.params.append(Param(name, span_in(chars, 0, len(name)), _literal(chars[0][at:], typed=sep == ":=")))
    for n, qat, v in query_pairs(query):
        call.params.append(Param(n, span_in(url, query_at + qat, len(n)), unquote_plus(v)))
    return ShellCall(rest=call, out_file=req.out_file)
