"""How each HTTP client spells a request: curl, wget, httpie (`http`, `https`, `xh`) and
`glab api`. Each parser returns what the command says — method, URL word, body words, form
fields, `name=value` items, output file — before anything is known about GitLab."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from scanner.readers.api.paths import METHODS
from scanner.readers.shell import Token


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
