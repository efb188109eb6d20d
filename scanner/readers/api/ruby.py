"""Ruby scripts: REST calls through HTTParty, Faraday, RestClient-style clients, `Net::HTTP` and
the `gitlab` gem, and GraphQL documents in strings and heredocs.

A call is `X.get|post|put|patch|delete(URL, …)` (or without parentheses, on one line) and
`Net::HTTP::Get|Post|Put|Patch|Delete.new(URL)`, where URL is a string literal, a name assigned
one, `URI(…)`/`URI.parse(…)` of either, or `+` of those, that resolves to a REST v4 URL
(`/api/v4`, `CI_API_V4_URL` in the environment). Request fields are the keys of the hash
literals passed to the call (`body: {active: false}`, `{"active" => false}`); response reads are
not followed. The `gitlab` gem's methods that reach an endpoint a policy names are mapped in
`GEM_METHODS` (`Gitlab.update_runner(42, active: false)`, `client.runners(…)`).

The lexer reads what API scripts need, nothing executed. Comments (`#`, `=begin`/`=end`) are
skipped. String literals (`'…'`, `"…"`, one line each) and heredoc bodies (`<<~ID`, `<<-ID`,
`<<ID`, quoted or not) become `str` tokens with the source offset of every character of their
value; `#{…}` in a double-quoted string or an unquoted heredoc is unknown text (NUL characters)
and its source is kept in `exprs`. Everything else is an identifier (`id`: names, constants,
`@ivars`, `$globals`, `:symbols` without the colon) or one punctuation character (`p`). It never
fails: text it does not understand is punctuation. Its tokens are the JavaScript lexer's
(`scanner.readers.api.lexed`); the `gitlab.rb` lexer (`scanner.readers.settings.ruby`) reads the
same language for another purpose, and that module says why the two stay apart.
"""

from __future__ import annotations

import re

from scanner.readers.api.lexed import GRAPHQL_TEXT, Tok, document, interpolation_end, rest_call
from scanner.readers.api.model import UNKNOWN, GraphqlText, Param, RestCall, line_starts, offset_pos
from scanner.readers.api.paths import API_BASE_ENV, api_base_url, env_base_in

# the lexer ------------------------------------------------------------------------------------

_IDENT = re.compile(r"[@$]{0,2}[A-Za-z_][\w]*[?!]?")
_HEREDOC = re.compile(r"<<([~-]?)(['\"]?)([A-Za-z_]\w*)\2")
_ESC = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "s": " "}
_BLANKS = re.compile(r"[ \t\r\\]+")
# A run of a literal's characters that are their own value, up to a backslash, `#`, a quote or a line end.
_PLAIN = {"'": re.compile(r"[^'\\\n]+"), '"': re.compile(r"[^\"\\\n#]+")}


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

    def run(self, text: str, start: int, end: int) -> int:
        """Characters `start` to `end` of `text`, each its own value; `end`."""
        self.chars.append(text[start:end])
        self.offsets.extend(range(start, end))
        return end

    def interpolation(self, text: str, j: int, limit: int) -> int:
        """Read the `#{…}` at `j` (not past `limit`); the index after it."""
        k = interpolation_end(text, j, limit)
        self.exprs.append(text[j + 2 : k - 1])
        self.chars.append("\0" * (k - j))
        self.offsets.extend(range(j, k))
        return k

    def token(self, start: int, end: int) -> Tok:
        return Tok("str", start, end, "".join(self.chars), self.offsets, self.exprs)


def _string(text: str, i: int) -> Tok:
    """A quoted literal on one line (an unclosed one ends at the end of its line)."""
    quote, j = text[i], i + 1
    value, plain = _Value(), _PLAIN[quote]
    while j < len(text) and text[j] not in (quote, "\n"):
        if m := plain.match(text, j):
            j = value.run(text, j, m.end())
        elif text[j] == "\\" and j + 1 < len(text) and text[j + 1] != "\n":
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
        elif c in " \t\r\\" and (m := _BLANKS.match(text, i)):
            i = m.end()
        elif c == "#":
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
        elif c == "=" and text.startswith("=begin", i) and (i == 0 or text[i - 1] == "\n"):
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


# the gitlab gem ---------------------------------------------------------------------------------

# `Gitlab.runners(status: "paused")` is `GET /runners?status=paused`. Method names, paths and which
# argument holds the options are the gem's own (NARKOZ/gitlab, `lib/gitlab/client/runners.rb` and
# `merge_requests.rb`). Only methods that reach an endpoint some policy names are listed.
# method → (HTTP method, path with `{}` for each id argument, index of the options argument or None)
GEM_METHODS: dict[str, tuple[str, str, int | None]] = {
    "runners": ("GET", "/runners", 0),
    "all_runners": ("GET", "/runners/all", 0),
    "runner": ("GET", "/runners/{}", None),
    "update_runner": ("PUT", "/runners/{}", 1),
    "project_runners": ("GET", "/projects/{}/runners", 1),
    "group_runners": ("GET", "/groups/{}/runners", 1),
    "register_runner": ("POST", "/runners", 1),
    "merge_request_changes": ("GET", "/projects/{}/merge_requests/{}/changes", None),
}
# How a script gets a client: `Gitlab.client(…)`, `Gitlab::Client.new(…)`; `Gitlab.x` itself works too.
GEM_CLIENT = "Gitlab"


# the calls ------------------------------------------------------------------------------------

PREFILTER = re.compile(r"/api/v4|CI_API_V4_URL|graphql|/tags/reference/|\bGitlab(?:\.|::Client)|"
                       + "|".join(API_BASE_ENV), re.IGNORECASE)
CAP = 256  # tokens of a call's arguments read, at most: a URL or an options hash is never longer
MAX_URL = 4096  # characters of a URL followed, at most
_VERBS = {"get": "GET", "post": "POST", "put": "PUT", "patch": "PATCH", "delete": "DELETE"}
_NET_HTTP = {"Get": "GET", "Post": "POST", "Put": "PUT", "Patch": "PATCH", "Delete": "DELETE"}
_LITERALS = {"true": True, "false": False, "nil": None}
_ENV_BASES = frozenset({"CI_API_V4_URL", *API_BASE_ENV})  # environment variables that hold the API base
Url = tuple[str, list[int | None]]  # a URL and the source offset of each character (None: not written here)


class _Rb:
    def __init__(self, text: str) -> None:
        self.text, self.toks, self.starts = text, lex(text), line_starts(text)
        self.names: dict[str, Url] = {}  # names assigned a URL-like expression, in file order

    def pos(self, offset: int) -> tuple[int, int]:
        return offset_pos(self.starts, offset)

    def same_line(self, k: int) -> list[Tok]:
        """The tokens after token `k` up to the end of its line."""
        end = self.text.find("\n", self.toks[k].end)
        end = len(self.text) if end < 0 else end
        out: list[Tok] = []
        for i in range(k + 1, min(len(self.toks), k + 1 + CAP)):
            if self.toks[i].start >= end:
                break
            out.append(self.toks[i])
        return out

    def url(self, toks: list[Tok]) -> Url:
        """The URL an expression builds (to the end of its statement): strings, names assigned one,
        `URI(…)`, `+`; at most `MAX_URL` characters of it."""
        text: list[str] = []
        offs: list[int | None] = []
        for k, tk in enumerate(toks):
            if tk.kind == "p" and tk.value == ";" or len(offs) > MAX_URL:
                break
            if tk.kind == "str" and tk.value in _ENV_BASES:  # `ENV["CI_API_V4_URL"]`, `ENV.fetch(…)`
                text.append("$" + tk.value)
                offs.extend([None] * (len(tk.value) + 1))
            elif tk.kind == "str":
                exprs = iter(tk.exprs)
                i = 0
                while i < len(tk.value):
                    if tk.value[i] == "\0":
                        j = i
                        while j < len(tk.value) and tk.value[j] == "\0":
                            j += 1
                        piece, where = self._interpolated(next(exprs, ""))
                        text.append(piece)
                        offs.extend(where)
                        i = j
                    else:
                        text.append(tk.value[i])
                        offs.append(tk.offsets[i])
                        i += 1
            elif tk.kind == "id" and tk.value in self.names and (k == 0 or toks[k - 1].value != "."):
                piece, where = self.names[tk.value]
                text.append(piece)
                offs.extend(where)
        return "".join(text), offs

    def _interpolated(self, expr: str) -> Url:
        name = expr.strip()
        if "CI_API_V4_URL" in expr:
            return "$CI_API_V4_URL", [None] * 14
        if (env := env_base_in(expr)) is not None:  # `#{ENV["GITLAB_API_URL"]}`
            return "$" + env, [None] * (len(env) + 1)
        if name in self.names:
            return self.names[name]
        return "{}", [None, None]

    def args(self, k: int) -> list[list[Tok]]:
        """The arguments after the callee at token `k`: in parentheses, or to the end of the line."""
        toks = self.toks
        if k + 1 < len(toks) and toks[k + 1].value == "(" and toks[k + 1].start == toks[k].end:
            inner, depth = [], 0
            for i in range(k + 2, min(len(toks), k + 2 + CAP)):
                tk = toks[i]
                if tk.kind == "p" and tk.value in "([{)]}":
                    depth += 1 if tk.value in "([{" else -1
                if depth < 0:
                    break
                inner.append(tk)
        else:
            inner = self.same_line(k)
        out: list[list[Tok]] = [[]]
        depth = 0
        for tk in inner:
            if tk.kind == "p" and tk.value in "([{":
                depth += 1
            elif tk.kind == "p" and tk.value in ")]}":
                depth -= 1
            elif tk.kind == "p" and tk.value == "," and depth == 0:
                out.append([])
                continue
            out[-1].append(tk)
        return [a for a in out if a]

    def params(self, args: list[list[Tok]]) -> list[Param]:
        """Keys of the hash literals among the arguments (also under `body:`/`query:`; not `headers:`)."""
        out: list[Param] = []
        for arg in args:
            skip_to = -1  # the end of the value of `headers:`
            for k, tk in enumerate(arg):
                value = _key_value(arg, k) if k > skip_to else None
                if value is None or tk.value in ("body", "query", "params", "json", "form"):
                    continue
                if tk.value == "headers":
                    skip_to = _closing(arg, arg.index(value))
                    continue
                line, col = self.pos(tk.offsets[0] if tk.kind == "str" and tk.offsets else tk.start)
                lit: object = UNKNOWN
                if value.kind == "id" and value.value in _LITERALS:
                    lit = _LITERALS[value.value]
                elif value.kind == "str":
                    lit = value.value
                out.append(Param(tk.value, (line, col, line, col + len(tk.value)), lit))
        return out

    def calls(self) -> list[RestCall]:
        out: list[RestCall] = []
        t = self.toks
        clients = {GEM_CLIENT}
        for k, tk in enumerate(t):
            if tk.kind == "id" and k + 1 < len(t) and t[k + 1].value == "=" and t[k + 2 : k + 3] and \
                    t[k + 2].value not in ("=", ">", "~"):
                found = self.url(self.same_line(k + 1))
                if "/api/v4" in found[0] or "CI_API_V4_URL" in found[0] or api_base_url(found[0]) is not None:
                    self.names[tk.value] = found
                if t[k + 2].value == GEM_CLIENT and len(t) > k + 4 and t[k + 4].value in ("client", "Client"):
                    clients.add(tk.value)  # `client = Gitlab.client(…)`, `Gitlab::Client.new(…)`
            if tk.value in GEM_METHODS and k > 1 and t[k - 1].value == "." and t[k - 2].value in clients:
                out.append(self._gem_call(k))
                continue
            method = None
            if tk.kind == "id" and tk.value in _VERBS and k > 0 and t[k - 1].value == ".":
                method = _VERBS[tk.value]
            elif tk.value == "new" and k >= 6 and t[k - 1].value == "." and t[k - 2].value in _NET_HTTP \
                    and t[k - 3].value == "::" and t[k - 4].value == "HTTP":
                method = _NET_HTTP[t[k - 2].value]
            if method is not None and (args := self.args(k)):
                call = self._call(method, args)
                if call is not None:
                    out.append(call)
        return out

    def _gem_call(self, k: int) -> RestCall:
        verb, path, options = GEM_METHODS[self.toks[k].value]
        line, col = self.pos(self.toks[k].start)
        call = RestCall(verb, path, (line, col, line, col + len(self.toks[k].value)))
        args = self.args(k)
        if options is not None:
            call.params.extend(self.params(args[options:]))
        return call

    def _call(self, method: str, args: list[list[Tok]]) -> RestCall | None:
        url, offs = self.url(args[0])
        return rest_call(method, url, offs, args[0][0].start, self.pos, self.params(args[1:]))

    def graphql(self) -> list[GraphqlText]:
        out: list[GraphqlText] = []
        for k, tk in enumerate(self.toks):
            if tk.kind != "str" or "}" not in tk.value:
                continue
            keyed = k > 1 and self.toks[k - 1].value in (":", ">") and self.toks[k - 2].value in ("query", "=")
            if keyed or GRAPHQL_TEXT.match(tk.value):
                out.append(document(tk, self.pos))
        return out


def extract(text: str) -> list[RestCall | GraphqlText]:
    """REST calls and GraphQL documents in a Ruby file."""
    if not PREFILTER.search(text):
        return []
    rb = _Rb(text)
    uses: list[RestCall | GraphqlText] = [*rb.calls(), *rb.graphql()]
    return uses


def _key_value(arg: list[Tok], k: int) -> Tok | None:
    """The value token when `arg[k]` is a hash key (`key:` or `"key" =>`/`:key =>`), else None."""
    tk = arg[k]
    if k > 0 and arg[k - 1].value not in ("{", ",", "("):
        return None
    if tk.kind == "id" and k + 2 < len(arg) and arg[k + 1].value == ":" and arg[k + 1].start == tk.end:
        return arg[k + 2]
    if tk.kind in ("str", "id") and k + 3 < len(arg) and arg[k + 1].value == "=" and arg[k + 2].value == ">":
        return arg[k + 3]
    return None


def _closing(toks: list[Tok], k: int) -> int:
    """Index of the bracket closing the one at `k` (`k` itself when it is not an opening one)."""
    if toks[k].kind != "p" or toks[k].value not in "([{":
        return k
    depth = 0
    for i in range(k, len(toks)):
        if toks[i].kind == "p" and toks[i].value in "([{)]}":
            depth += 1 if toks[i].value in "([{" else -1
            if depth == 0:
                return i
    return len(toks)
