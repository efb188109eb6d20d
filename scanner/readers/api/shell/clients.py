"""One HTTP client command in a shell script → a REST call or a GraphQL request.

How each client spells a request — curl, wget, httpie (`http`, `https`, `xh`) and `glab api` —
is read first (method, URL word, body words, form fields, `name=value` items, output file),
before anything is known about GitLab. Then the URL decides whether it is the GitLab REST v4 or
GraphQL API, and bodies (`key=value&…`, JSON), form fields, httpie and glab items and query
strings become request fields with their exact positions.

Every field is placed at the exact character it is written at, inside quotes and across lines
(`scanner.readers.shell.word_chars`): the column of `active` inside `--form "active=false"`, a
GraphQL query quoted over several lines.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from urllib.parse import unquote_plus

from scanner.core.tree import Span
from scanner.readers.api.model import UNKNOWN, GraphqlText, Param, RestCall
from scanner.readers.api.paths import METHODS, api_base_url, is_graphql_url, query_pairs
from scanner.readers.shell import Chars, Token, word_chars

# request bodies and positions inside words ----------------------------------------------------


def span_in(chars: Chars, offset: int, length: int) -> Span:
    positions = chars[1]
    if not positions:
        return (1, 1, 1, 1)
    line, col = positions[min(offset, len(positions) - 1)]
    return (line, col, line, col + length)


_JSON_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def json_string_value(text: str, key: str) -> tuple[str, list[int]] | None:
    """The string value of top-level-looking `"key": "..."` in JSON `text`, with the index in
    `text` of each character of the decoded value."""
    m = re.search(rf'"{re.escape(key)}"\s*:\s*"', text)
    if m is None:
        return None
    out: list[str] = []
    idx: list[int] = []
    i = m.end()
    while i < len(text) and text[i] != '"':
        if text[i] == "\\" and i + 1 < len(text):
            esc = text[i + 1]
            if esc == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", text[i + 2 : i + 6]):
                out.append(chr(int(text[i + 2 : i + 6], 16)))
                idx.append(i)
                i += 6
                continue
            out.append(_JSON_ESCAPES.get(esc, esc))
            idx.append(i)
            i += 2
            continue
        out.append(text[i])
        idx.append(i)
        i += 1
    return "".join(out), idx


def json_object(text: str) -> dict[str, object] | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def json_key_offset(text: str, key: str) -> int:
    m = re.search(rf'"{re.escape(key)}"\s*:', text)
    return m.start() + 1 if m else 0


# how each client spells a request -----------------------------------------------------------

@dataclass(slots=True)
class Request:
    """What a client command says, before it is known to be a GitLab API call."""

    method: str | None = None
    url: Token | None = None
    bodies: list[tuple[Token, int]] = field(default_factory=list)  # word, offset of the body in it
    forms: list[tuple[Token, int]] = field(default_factory=list)
    items: list[tuple[Token, str, str, int]] = field(default_factory=list)  # httpie / glab: word, name, sep, value at
    get: bool = False
    out_file: str | None = None


_CURL_DATA = {"-d", "--data", "--data-raw", "--data-binary", "--data-ascii", "--data-urlencode", "--json"}
_CURL_FORM = {"-F", "--form", "--form-string"}
_CURL_ARG = {
    "-H", "--header", "-u", "--user", "-A", "--user-agent", "-e", "--referer", "-b", "--cookie", "-c",
    "--cookie-jar", "--cacert", "--capath", "--cert", "--key", "-m", "--max-time", "--connect-timeout",
    "--retry", "--retry-delay", "--retry-max-time", "-w", "--write-out", "-x", "--proxy", "--resolve", "-K",
    "--config", "-T", "--upload-file", "-r", "--range", "-E", "--oauth2-bearer", "-D", "--dump-header",
    "--limit-rate", "--max-filesize", "--interface", "-z", "--time-cond", "--stderr", "--trace",
    "--trace-ascii", "-C", "--continue-at", "-y", "--speed-time", "-Y", "--speed-limit", "--variable",
}


def _curl(args: list[Token]) -> Request:
    req = Request()
    k = 0
    while k < len(args):
        w, t = args[k], args[k].text
        nxt = args[k + 1] if k + 1 < len(args) else None
        if t in ("-X", "--request") and nxt:
            req.method, k = nxt.text.upper(), k + 2
            continue
        if t in _CURL_DATA and nxt:
            req.bodies.append((nxt, 0))
            req.method = req.method or ("POST" if t == "--json" else None)
            k += 2
            continue
        if t in _CURL_FORM and nxt:
            req.forms.append((nxt, 0))
            k += 2
            continue
        if t in ("-o", "--output") and nxt:
            req.out_file, k = nxt.text, k + 2
            continue
        if t == "--url" and nxt:
            req.url, k = nxt, k + 2
            continue
        if t in _CURL_ARG:
            k += 2
            continue
        k += _curl_short(req, w, nxt) if t.startswith("-") and not t.startswith("--") and len(t) > 1 else 1
        if t in ("-G", "--get"):
            req.get = True
        elif t in ("-I", "--head"):
            req.method = "HEAD"
        elif not t.startswith("-") and req.url is None:
            req.url = w
    return req


def _curl_short(req: Request, w: Token, nxt: Token | None) -> int:
    """`-sS`, `-XPUT`, `-dkey=value`, `-sSo out.json`: returns how many words were used."""
    t = w.text
    for pos in range(1, len(t)):
        c = t[pos]
        rest = t[pos + 1 :]
        if c in "XdFo" or c in "HuAebcmwxKTrEDyYzC":
            value, used = (rest, 1) if rest else ((nxt.text if nxt else ""), 2)
            if c == "X":
                req.method = value.upper()
            elif c == "d" and rest:
                req.bodies.append((w, pos + 1))
            elif c == "d" and nxt:
                req.bodies.append((nxt, 0))
            elif c == "F" and rest:
                req.forms.append((w, pos + 1))
            elif c == "F" and nxt:
                req.forms.append((nxt, 0))
            elif c == "o":
                req.out_file = value
            return used
        if c == "G":
            req.get = True
        elif c == "I":
            req.method = "HEAD"
    return 1


_WGET_ARG = {"--header", "-U", "--user-agent", "--user", "--password", "-e", "-o", "--output-file", "-a",
             "-t", "--tries", "-T", "--timeout", "--ca-certificate", "--certificate", "--private-key"}


def _wget(args: list[Token]) -> Request:
    req = Request()
    k = 0
    while k < len(args):
        w, t = args[k], args[k].text
        nxt = args[k + 1] if k + 1 < len(args) else None
        name, eq, value = t.partition("=")
        if name in ("--post-data", "--body-data"):
            if eq:
                req.bodies.append((w, len(name) + 1))
            elif nxt:
                req.bodies.append((nxt, 0))
                k += 1
            req.method = req.method or "POST"
        elif name == "--method":
            req.method = (value if eq else (nxt.text if nxt else "")).upper()
            k += 0 if eq else 1
        elif name in ("-O", "--output-document"):
            req.out_file = value if eq else (nxt.text if nxt else None)
            k += 0 if eq else 1
        elif t.startswith("-") and not t.startswith("--") and "O" in t:
            after = t[t.index("O") + 1 :]
            req.out_file = after or (nxt.text if nxt else None)
            k += 0 if after else 1
        elif t in _WGET_ARG:
            k += 1
        elif not t.startswith("-") and req.url is None:
            req.url = w
        k += 1
    return req


_HTTPIE_ARG = {"-a", "--auth", "-A", "--auth-type", "-o", "--output", "--session", "--session-read-only",
               "--verify", "--cert", "--cert-key", "--timeout", "--proxy", "-p", "--print", "--pretty", "-s",
               "--style", "--format-options", "--default-scheme", "--boundary", "--raw"}


def _item(w: Token) -> tuple[str, str, int] | None:
    """httpie / glab request item `name==v`, `name:=v`, `name=v`, `name:v`: (name, sep, value offset)."""
    t = w.text
    for i, ch in enumerate(t):
        if ch in "=:@":
            name = t[:i]
            for sep in ("==", ":=", "=", ":", "@"):
                if t.startswith(sep, i):
                    return (name, sep, i + len(sep)) if name else None
        if not (ch.isalnum() or ch in "_-.[]"):
            return None
    return None


def _httpie(args: list[Token]) -> Request:
    req = Request()
    k = 0
    while k < len(args):
        w, t = args[k], args[k].text
        if t in _HTTPIE_ARG:
            k += 2
            continue
        if t.startswith("-"):
            k += 1
            continue
        if req.url is None and req.method is None and t in METHODS:
            req.method = t
        elif req.url is None:
            req.url = w
        elif (item := _item(w)) is not None:
            req.items.append((w, *item))
        k += 1
    if req.method is None:
        req.method = "POST" if any(sep in ("=", ":=") for _, _, sep, _ in req.items) else "GET"
    return req


def _glab(args: list[Token]) -> Request:
    req = Request()
    if not args or args[0].text != "api":
        return req
    k = 1
    while k < len(args):
        w, t = args[k], args[k].text
        nxt = args[k + 1] if k + 1 < len(args) else None
        if t in ("-X", "--method") and nxt:
            req.method, k = nxt.text.upper(), k + 2
            continue
        if t in ("-f", "--raw-field", "-F", "--field") and nxt:
            item = _item(nxt)
            if item is not None and item[1] == "=":
                req.items.append((nxt, item[0], "=" if t in ("-f", "--raw-field") else ":=", item[2]))
            k += 2
            continue
        if t in ("-H", "--header", "--hostname", "--input", "-R", "--repo"):
            k += 2
            continue
        if not t.startswith("-") and req.url is None:
            req.url = w
        k += 1
    if req.method is None:
        req.method = "POST" if req.items else "GET"
    return req


PARSERS: dict[str, Callable[[list[Token]], Request]] = {
    "curl": _curl, "wget": _wget, "http": _httpie, "https": _httpie, "xh": _httpie, "xhs": _httpie, "glab": _glab,
}


# the request, when it is GitLab's API -------------------------------------------------------

CLIENTS = frozenset({"curl", "wget", "http", "https", "xh", "xhs", "glab"})


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


def parse_call(program: str, args: list[Token]) -> ShellCall | None:
    """The API request made by `program args...` (variables already written in), or None when it
    is not a GitLab API call."""
    args, redirected = _redirects(args)
    req = PARSERS[program](args)
    req.out_file = req.out_file or redirected
    if req.url is None:
        return None
    url = word_chars(req.url)
    if program == "glab":
        if url[0] == "graphql":
            return _graphql_request(req)
        endpoint, _, query = url[0].partition("?")
        path = "/" + endpoint.lstrip("/")
        return _rest(req, path, span_in(url, 0, len(endpoint)), url, query, len(endpoint) + 1)
    if is_graphql_url(url[0]):
        return _graphql_request(req)
    parts = api_base_url(url[0])
    if parts is None:
        return None
    span = span_in(url, parts.path_at, len(parts.path))
    return _rest(req, parts.path, span, url, parts.query, parts.query_at)


def _graphql_request(req: Request) -> ShellCall:
    for w, at in req.bodies:
        if (gql := _graphql_query(word_chars(w), at, json_body=True)) is not None:
            return ShellCall(graphql=gql, out_file=req.out_file)
    for w, name, _, at in req.items:
        if name == "query":
            return ShellCall(graphql=_graphql_query(word_chars(w), at, json_body=False), out_file=req.out_file)
    return ShellCall(out_file=req.out_file)


def _rest(req: Request, path: str, span: Span, url: Chars, query: str, query_at: int) -> ShellCall:
    method = req.method or ("GET" if req.get or not (req.bodies or req.forms) else "POST")
    call = RestCall(method, path, span)
    for w, at in req.bodies:
        call.params.extend(_pairs_params(word_chars(w), at))
    for w, at in req.forms:
        chars = word_chars(w)
        name, _, value = chars[0][at:].partition("=")
        call.params.append(Param(name, span_in(chars, at, len(name)), UNKNOWN if value.startswith("@") else value))
    for w, name, sep, at in req.items:
        if sep in ("==", "=", ":="):
            chars = word_chars(w)
            call.params.append(Param(name, span_in(chars, 0, len(name)), _literal(chars[0][at:], typed=sep == ":=")))
    for n, qat, v in query_pairs(query):
        call.params.append(Param(n, span_in(url, query_at + qat, len(n)), unquote_plus(v)))
    return ShellCall(rest=call, out_file=req.out_file)
