"""REST URLs: where the API path starts in a URL, and the endpoint patterns policies name.

A URL is a GitLab REST v4 URL when it contains `/api/v4`, starts with `$CI_API_V4_URL`, or
starts with a variable the script (or the CI file) set to one of those. A reader may also take
the environment variables of `API_BASE_ENV` as the base (a URL without `/api/v4` of its own). Everything after
that prefix up to `?` or `#` is the path; the caller's segments are kept as written.

One route of GitLab's container registry is read too, because GitLab's record removes it: the
registry's own tag delete extension `/v2/<name>/tags/reference/<tag>` (its path starts at `/v2/`;
no other registry URL is taken for an API call).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_V4 = re.compile(r"/api/v4(?=[/?#]|$)")
_REGISTRY_TAG = re.compile(r"/v2/(?:[^/?#\s\"']+/)+tags/reference/[^/?#\s\"']+")
_GRAPHQL = re.compile(r"/api/graphql(?=[/?#\"']|$)|\$\{?CI_API_GRAPHQL_URL\b")
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"})

# Environment variables that, by the name users give them, hold the REST v4 base URL
# (`GITLAB_API_URL=https://gitlab.example.com/api/v4`): a URL that starts with one, and has no
# `/api/v4` of its own, is an API URL. The one list every reader takes them from.
API_BASE_ENV = ("GITLAB_API", "GITLAB_API_URL", "GITLAB_API_V4_URL")


@dataclass(frozen=True, slots=True)
class UrlParts:
    path: str
    path_at: int  # offset of the path in the URL text
    query: str
    query_at: int


def _var_prefix(url: str, names: Iterable[str]) -> int | None:
    for name in names:
        m = re.match(rf"\$(?:\{{{re.escape(name)}\}}|{re.escape(name)}(?![A-Za-z0-9_]))", url)
        if m:
            return m.end()
    return None


def api_url(url: str, bases: Iterable[str] = ()) -> UrlParts | None:
    """The REST path of `url`, or None when `url` is not a GitLab REST v4 URL (or the registry's tag
    reference route)."""
    while url.endswith(")") and url.count(")") > url.count("("):
        url = url[:-1]  # the last word of `X=$(curl … URL)`
    start = _var_prefix(url, ("CI_API_V4_URL", *bases))
    if start is None:
        m = _V4.search(url)
        if m is not None:
            start = m.end()
        elif registry := _REGISTRY_TAG.search(url):
            start = registry.start()
        else:
            return None
    end = len(url)
    for stop in "?#":
        at = url.find(stop, start)
        if at >= 0:
            end = min(end, at)
    path = url[start:end]
    query_at = end + 1 if end < len(url) and url[end] == "?" else len(url)
    query = url[query_at:].split("#", 1)[0] if query_at < len(url) else ""
    return UrlParts(path or "/", start, query, query_at)


_ENV_BASE_WORD = re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, API_BASE_ENV), key=len, reverse=True)) + r")\b")


def env_base_in(text: str) -> str | None:
    """The first name of `API_BASE_ENV` written in `text` as a whole word (`process.env.GITLAB_API`,
    `ENV.fetch("GITLAB_API_URL")`), or None."""
    m = _ENV_BASE_WORD.search(text)
    return m.group(0) if m else None


def api_base_url(url: str) -> UrlParts | None:
    """`api_url` that also takes a URL starting with one of `API_BASE_ENV` (unless the URL holds
    `/api/v4` itself: then that variable is the host, and the path starts after `/api/v4`)."""
    return api_url(url, () if _V4.search(url) else API_BASE_ENV)


def is_graphql_url(url: str, bases: Iterable[str] = ()) -> bool:
    return bool(_GRAPHQL.search(url)) or _var_prefix(url, bases) is not None


def query_pairs(text: str) -> list[tuple[str, int, str]]:
    """`a=1&b=2` → [(name, offset of name, value)]; pairs without a name are skipped."""
    out: list[tuple[str, int, str]] = []
    at = 0
    for part in text.split("&"):
        name, _, value = part.partition("=")
        if name and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_\[\]]*", name):
            out.append((name.removesuffix("[]"), at, value))
        at += len(part) + 1
    return out


@dataclass(frozen=True, slots=True)
class Endpoint:
    """`PUT /runners/:id`, `GET|HEAD /runners`, `* /geo_nodes/**` compiled once."""

    text: str
    methods: frozenset[str] | None  # None: any method
    pattern: re.Pattern[str]

    def matches(self, method: str, path: str) -> bool:
        """Whether a call of `method` to `path` is this endpoint."""
        return self.matches_normalised(method, normalise(path))

    def matches_normalised(self, method: str, path: str) -> bool:
        """`matches`, for a path `normalise` gave (a caller testing many endpoints normalises once)."""
        if self.methods is not None and method not in self.methods:
            return False
        return self.pattern.fullmatch(path) is not None


def normalise(path: str) -> str:
    """Leading slash, no trailing slash, no empty segments."""
    segments = [s for s in path.split("/") if s]
    return "/" + "/".join(segments)


def compile_endpoint(text: str) -> Endpoint:
    """Segments are literal, `:name` (any one segment), `**` at the end (any rest, or nothing) or
    `**` before other segments (one segment or more: a registry repository's path)."""
    method_text, _, path = text.strip().partition(" ")
    path = path.strip()
    if not path.startswith("/"):
        raise ValueError(f"endpoint {text!r}: write `METHOD /path`, e.g. `GET /runners/:id`")
    methods = None if method_text == "*" else frozenset(method_text.split("|"))
    if methods is not None and not methods <= METHODS:
        raise ValueError(f"endpoint {text!r}: unknown method in {method_text!r}")
    parts: list[str] = []
    segments = [s for s in path.split("/") if s]
    for i, seg in enumerate(segments):
        if seg == "**":
            parts.append("(?:/[^/]+)*" if i == len(segments) - 1 else "(?:/[^/]+)+")
        elif seg.startswith(":"):
            parts.append("/[^/]+")
        else:
            parts.append("/" + re.escape(seg))
    return Endpoint(text, methods, re.compile("".join(parts) or "/"))
