"""JavaScript and TypeScript: `fetch`/`axios`-style calls to the REST API and GraphQL documents
in string and template literals (`gql\\`...\\``).

A small lexer skips comments, reads string and template literals with the source offset of every
character and skips regex literals. A call is
`fetch(URL, {method, body: JSON.stringify({...})})` or `X.get|post|put|patch|delete(URL, body)`
where URL is a literal, a template or a `+` concatenation that resolves to a REST v4 URL
(`/api/v4`, `CI_API_V4_URL`, or a const set to one). In a file that speaks GitLab's API (`/api/v4`,
`CI_API_V4_URL`, a `PRIVATE-TOKEN` or `JOB-TOKEN` header), the file's own request helpers count too:
a function or method whose body fetches a URL built with its first parameter (`${base}${path}`,
`base + path`), or passes that parameter on to another such helper,
makes each call with a path relative to the API (`this.request("/projects/1/merge_requests/2/changes")`,
a template too) a call to that path. Response reads are not followed in JS.
"""

from __future__ import annotations

import re

from scanner.readers.api.lexed import GRAPHQL_TEXT, Tok, document, interpolation_end, rest_call
from scanner.readers.api.model import UNKNOWN, GraphqlText, Param, RestCall, line_starts, offset_pos
from scanner.readers.api.paths import API_BASE_ENV, env_base_in

# the lexer ------------------------------------------------------------------------------------

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
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
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


# the calls ------------------------------------------------------------------------------------

PREFILTER = re.compile(r"/api/v4|CI_API_V4_URL|graphql|gql|/tags/reference/|PRIVATE-TOKEN|JOB-TOKEN|"
                       + "|".join(API_BASE_ENV))
# A file whose own request helpers take paths relative to GitLab's API (`_Js._wrapped_calls`).
_GITLAB = re.compile(r"/api/v4|CI_API_V4_URL|[\"'](?:PRIVATE|JOB)-TOKEN[\"']|\b(?:" + "|".join(API_BASE_ENV) + r")\b")
_NOT_NAMES = frozenset({"if", "for", "while", "switch", "catch", "with", "return", "function", "await", "typeof",
                        "new", "super", "constructor"})
_MAX_TYPE = 64  # tokens of a type annotation read, at most
_API_BASE = "$CI_API_V4_URL"  # what a path relative to the API is read after
_MAX_WRAPPING = 8  # helpers calling helpers, levels followed at most
CAP = 256  # tokens of one argument read, at most: a URL or an options object is never longer
_VERBS = {"get": "GET", "post": "POST", "put": "PUT", "patch": "PATCH", "delete": "DELETE", "head": "HEAD"}


class _Js:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = lex(text)
        self.starts = line_starts(text)
        self.close: dict[int, int] = {}  # index of an opening bracket → index of its closing one
        self.parent: list[int] = []  # index of each token → index of the innermost bracket around it (-1)
        stack: list[int] = []
        for k, tk in enumerate(self.toks):
            self.parent.append(stack[-1] if stack else -1)
            if tk.kind == "p" and tk.value in "([{":
                stack.append(k)
            elif tk.kind == "p" and tk.value in ")]}" and stack:
                self.close[stack.pop()] = k
        for k in stack:
            self.close[k] = len(self.toks)
        self.bases, self.env_bases = self._bases()

    def pos(self, offset: int) -> tuple[int, int]:
        return offset_pos(self.starts, offset)

    def _bases(self) -> tuple[set[str], dict[str, str]]:
        """The consts that hold GitLab's API base: `const API = \\`${process.env.CI_SERVER_URL}/api/v4\\``
        and the like; and those that hold one of `API_BASE_ENV` with no `/api/v4` of their own
        (`const API = process.env.GITLAB_API_URL` → `$GITLAB_API_URL`)."""
        bases: set[str] = set()
        env_bases: dict[str, str] = {}
        t = self.toks
        for k in range(len(t) - 3):
            if t[k].value in ("const", "let", "var") and t[k + 1].kind == "id" and t[k + 2].value == "=":
                start = t[k + 3].start
                line_end = self.text.find("\n", start, start + 4096)
                rhs = self.text[start : line_end if line_end >= 0 else start + 4096]
                if "/api/v4" in rhs or "CI_API_V4_URL" in rhs:
                    bases.add(t[k + 1].value)
                elif (env := env_base_in(rhs)) is not None:
                    env_bases[t[k + 1].value] = "$" + env
        return bases, env_bases

    def _named(self, name: str) -> str:
        """What a name stands for in a URL: GitLab's API base, one of `API_BASE_ENV`, or unknown."""
        if name in self.bases or name == "CI_API_V4_URL":
            return _API_BASE
        if name in API_BASE_ENV:
            return "$" + name
        return self.env_bases.get(name, "{}")

    def _piece(self, toks: list[Tok]) -> tuple[str, list[int | None]]:
        """The URL an argument expression builds, with the source offset of each literal char."""
        url: list[str] = []
        offs: list[int | None] = []
        k = 0
        while k < len(toks):
            tk = toks[k]
            if tk.kind == "str":
                for ch, off, expr in self._template_chars(tk):
                    url.append(ch)
                    offs.append(None if expr else off)
            elif tk.kind == "id":
                while k + 2 < len(toks) and toks[k + 1].value == "." and toks[k + 2].kind == "id":
                    k += 2  # `process.env.CI_API_V4_URL`: the last name says what it is
                last = toks[k].value
                text = self._named(last)
                url.append(text)
                offs.extend([None] * len(text))
            k += 1
        return "".join(url), offs

    def _template_chars(self, tk: Tok) -> list[tuple[str, int, bool]]:
        out: list[tuple[str, int, bool]] = []
        exprs = iter(tk.exprs)
        i = 0
        while i < len(tk.value):
            if tk.value[i] == "\0":
                j = i
                while j < len(tk.value) and tk.value[j] == "\0":
                    j += 1
                expr = next(exprs, "")
                env = env_base_in(expr)
                text = _API_BASE if "CI_API_V4_URL" in expr else "$" + env if env else self._named(expr.strip())
                for ch in text:
                    out.append((ch, tk.offsets[i], True))
                i = j
            else:
                out.append((tk.value[i], tk.offsets[i], False))
                i += 1
        return out

    def _args(self, open_at: int) -> list[list[Tok]]:
        """The first two arguments of the call whose `(` is token `open_at` (each at most `CAP` tokens)."""
        toks = self.toks
        args: list[list[Tok]] = [[]]
        i, end = open_at + 1, self.close[open_at]
        while i < end:
            tk = toks[i]
            if tk.kind == "p" and tk.value == ",":
                if len(args) == 2:
                    break
                args.append([])
                i += 1
                continue
            stop = self.close[i] + 1 if tk.kind == "p" and tk.value in "([{" else i + 1
            room = CAP - len(args[-1])
            args[-1].extend(toks[i : min(stop, i + room)] if room > 0 else ())
            i = stop
        return [a for a in args if a]

    def _object_keys(self, toks: list[Tok]) -> list[tuple[Tok, Tok | None]]:
        """Keys of the first object literal in `toks` (depth 1), with the token after `:`."""
        out: list[tuple[Tok, Tok | None]] = []
        depth = 0
        for k, tk in enumerate(toks):
            if tk.kind == "p" and tk.value in "([{":
                depth += 1
                if depth == 1 and tk.value != "{":
                    return out
                continue
            if tk.kind == "p" and tk.value in ")]}":
                depth -= 1
                if depth == 0:
                    return out
                continue
            prev = toks[k - 1].value if k else ""
            nxt = toks[k + 1] if k + 1 < len(toks) else None
            if depth == 1 and tk.kind in ("id", "str") and prev in ("{", ",") and nxt is not None:
                if nxt.value == ":":
                    out.append((tk, toks[k + 2] if k + 2 < len(toks) else None))
                elif nxt.value in (",", "}") and tk.kind == "id":
                    out.append((tk, None))
        return out

    def _params(self, toks: list[Tok]) -> list[Param]:
        out: list[Param] = []
        for key, value in self._object_keys(toks):
            name = key.value
            start = key.offsets[0] if key.kind == "str" and key.offsets else key.start
            line, col = self.pos(start)
            lit: object = UNKNOWN
            if value is not None and value.kind == "id" and value.value in ("null", "true", "false"):
                lit = {"null": None, "true": True, "false": False}[value.value]
            elif value is not None and value.kind == "str":
                lit = value.value
            out.append(Param(name, (line, col, line, col + len(name)), lit))
        return out

    def _body(self, options: list[Tok]) -> tuple[str | None, list[Param]]:
        """fetch options: `method` and the keys of `body: JSON.stringify({...})` or params."""
        method: str | None = None
        params: list[Param] = []
        for key, value in self._object_keys(options):
            if key.value == "method" and value is not None and value.kind == "str":
                method = value.value.upper()
            elif key.value in ("body", "params", "data", "json") and value is not None:
                at = next(i for i, t in enumerate(options) if t is value)
                rest = options[at:]
                inner = next((i for i, t in enumerate(rest) if t.value == "{"), None)
                if inner is not None:
                    params.extend(self._params(rest[inner:]))
        return method, params

    def calls(self) -> list[RestCall]:
        out: list[RestCall] = []
        t = self.toks
        for k, tk in enumerate(t):
            if tk.value != "(" or tk.kind != "p" or k == 0 or t[k - 1].kind != "id":
                continue
            callee = t[k - 1].value
            is_method = k >= 2 and t[k - 2].value == "."
            if not ((callee == "fetch" and not is_method) or (callee in _VERBS and is_method)):
                continue
            args = self._args(k)
            if not args:
                continue
            url, offs = self._piece(args[0])
            method: str | None = None
            params: list[Param] = []
            if callee == "fetch" and len(args) > 1:
                method, params = self._body(args[1])
            elif len(args) > 1:
                params = self._params(args[1]) if callee != "get" else self._body(args[1])[1]
            call = rest_call(method or _VERBS.get(callee, "GET"), url, offs, args[0][0].start, self.pos, params)
            if call is not None:
                out.append(call)
        return out + self._wrapped_calls()

    # the file's own request helpers ---------------------------------------------------------------

    def _definitions(self) -> list[tuple[int, str, int]]:
        """Functions and methods defined in the file: (index of the name, its first parameter, index
        of the body's `{`) — `name(p, …) {`, `async name<T>(p: string): Promise<T> {`, `function
        name(p) {`, `const name = async (p) => {`."""
        t = self.toks
        out: list[tuple[int, str, int]] = []
        for k, tk in enumerate(t):
            if tk.kind != "id" or tk.value in _NOT_NAMES or (k and t[k - 1].value == "."):
                continue
            j = k + 1
            if j < len(t) and t[j].value == "=":  # `name = async (p) => {`
                j += 2 if j + 1 < len(t) and t[j + 1].value == "async" else 1
                arrow = True
            else:
                j = self._after_generics(j)
                arrow = False
            if j >= len(t) or t[j].value != "(" or t[j].kind != "p" or j + 1 >= len(t) or t[j + 1].kind != "id":
                continue
            body = self._body_start(self.close[j] + 1, arrow)
            if body is not None:
                out.append((k, t[j + 1].value, body))
        return out

    def _after_generics(self, j: int) -> int:
        """The index after `<…>` at `j` (a type's parameters: names, `.`, `,`, `[]`, `{…}`, `|`), else `j`."""
        t = self.toks
        if j >= len(t) or t[j].value != "<":
            return j
        depth, k = 0, j
        while k < len(t) and k - j < _MAX_TYPE:
            v = t[k].value
            if v == "<":
                depth += 1
            elif v == ">":
                depth -= 1
                if depth == 0:
                    return k + 1
            elif t[k].kind == "p" and v in "([{" and k in self.close:
                k = self.close[k]
            elif t[k].kind == "p" and v not in ".,|&:;?]})":
                return j
            k += 1
        return j

    def _body_start(self, k: int, arrow: bool) -> int | None:
        """After a parameter list: the index of the body's `{` (past a return type and, for an arrow
        function, its `=>`), or None when what follows is no body (a call)."""
        t = self.toks
        if k < len(t) and t[k].value == ":":  # a return type: up to the `{` or `=>` outside brackets
            end = min(len(t), k + _MAX_TYPE)
            k += 1
            while k < end:
                if t[k].value == "<" and (after := self._after_generics(k)) != k:
                    k = after
                    continue
                if t[k].value == "{" or t[k].value == "=" and k + 1 < len(t) and t[k + 1].value == ">":
                    break
                k = self.close.get(k, k) + 1 if t[k].kind == "p" and t[k].value in "([" else k + 1
        if arrow:
            if not (k + 1 < len(t) and t[k].value == "=" and t[k + 1].value == ">"):
                return None
            k += 2
        return k if k < len(t) and t[k].value == "{" and t[k].kind == "p" else None

    def _wrappers(self, definitions: list[tuple[int, str, int]]) -> set[str]:
        """The file's functions that send a request to a URL ending in their first parameter: their
        body calls `fetch` and has the parameter in a template literal (`${this.base}${path}`) or after
        a `+`, or passes the parameter on to another of them (`this.raw(path, init)`). The first `CAP`
        tokens of a body are read."""
        t = self.toks
        sending: set[str] = set()
        passing: dict[str, set[str]] = {}  # a function → those it passes its first parameter to
        for name_at, param, body in definitions:
            inner = t[body + 1 : min(self.close[body], body + 1 + CAP)]
            requests = in_url = False
            for k, tk in enumerate(inner):
                if tk.kind == "id" and k + 1 < len(inner) and inner[k + 1].value == "(":
                    if tk.value == "fetch" and not (k and inner[k - 1].value == "."):
                        requests = True
                    elif k + 3 < len(inner) and inner[k + 2].value == param and inner[k + 3].value in (",", ")"):
                        passing.setdefault(t[name_at].value, set()).add(tk.value)
                elif tk.kind == "str" and any(e.strip() == param for e in tk.exprs) or \
                        tk.value == "+" and k + 1 < len(inner) and inner[k + 1].value == param:
                    in_url = True
            if requests and in_url:
                sending.add(t[name_at].value)
        for _ in range(_MAX_WRAPPING):
            more = {name for name, callees in passing.items() if name not in sending and callees & sending}
            if not more:
                break
            sending |= more
        return sending

    def _wrapped_calls(self) -> list[RestCall]:
        """Calls of the file's own request helpers (`this.request("/projects/1/…")`) in a file
        that speaks GitLab's API: a path relative to the API's base is a REST v4 path."""
        if not _GITLAB.search(self.text):
            return []
        definitions = self._definitions()
        wrappers = self._wrappers(definitions)
        if not wrappers:
            return []
        named = {name_at for name_at, _, _ in definitions}
        t = self.toks
        out: list[RestCall] = []
        for k, tk in enumerate(t):
            if tk.kind != "id" or tk.value not in wrappers or k in named:
                continue
            if k and t[k - 1].value == "." and not (k > 1 and t[k - 2].value == "this"):
                continue  # another object's method of the same name
            j = self._after_generics(k + 1)
            if j >= len(t) or t[j].value != "(" or t[j].kind != "p":
                continue
            args = self._args(j)
            if not args:
                continue
            url, offs = self._piece(args[0])
            if url.startswith("/") and not url.startswith("/api/v4"):
                unwritten: list[int | None] = [None] * len(_API_BASE)
                url, offs = _API_BASE + url, unwritten + offs
            elif tk.value in _VERBS and k and t[k - 1].value == ".":
                continue  # `this.get(URL)` with a whole URL: `calls` reads it as a client's method
            method, params = self._body(args[1]) if len(args) > 1 else (None, [])
            call = rest_call(method or "GET", url, offs, args[0][0].start, self.pos, params)
            if call is not None:
                out.append(call)
        return out

    def graphql(self) -> list[GraphqlText]:
        out: list[GraphqlText] = []
        variables = self._variables()
        for k, tk in enumerate(self.toks):
            if tk.kind != "str" or "}" not in tk.value:
                continue
            tagged = k > 0 and self.toks[k - 1].value in ("gql", "graphql")
            keyed = k > 1 and self.toks[k - 1].value == ":" and self.toks[k - 2].value == "query"
            if tagged or keyed or GRAPHQL_TEXT.match(tk.value):
                out.append(document(tk, self.pos, tuple(variables.get(k, ()))))
        return out

    def _variables(self) -> dict[int, dict[str, None]]:
        """Index of a query's string literal → the key paths of the `variables` sent with it:
        `{query: <literal or const>, variables: {input: {active: false}}}` (union over requests)."""
        toks = self.toks
        out: dict[int, dict[str, None]] = {}
        consts = {toks[k + 1].value: k + 3 for k in range(len(toks) - 3)
                  if toks[k].value in ("const", "let", "var") and toks[k + 2].value == "="
                  and toks[k + 3].kind == "str"}
        for k in range(1, len(toks) - 2):
            if toks[k].value != "variables" or toks[k + 1].value != ":" or toks[k + 2].value != "{":
                continue
            opener = self.parent[k]
            if opener < 0 or toks[opener].value != "{":
                continue
            sent = dict.fromkeys(_key_paths(toks[k + 2 : k + 2 + CAP]))
            body = toks[opener : min(self.close[opener] + 1, opener + CAP)]
            for key, value in self._object_keys(body):
                if key.value == "query" and value is not None:
                    at = opener + next(i for i, t in enumerate(body) if t is value)
                    query = at if value.kind == "str" else consts.get(value.value) if value.kind == "id" else None
                    if query is not None:
                        out.setdefault(query, {}).update(sent)
        return out



def _key_paths(toks: list[Tok]) -> list[str]:
    """`a`, `a.b`, … for the keys of the object literal whose `{` is `toks[0]`, nested ones too."""
    out: list[str] = []
    paths: list[str | None] = []  # per open bracket: the path of the object it opens, None if not one
    key: str | None = None
    for k in range(len(toks)):
        tk = toks[k]
        if tk.kind == "p" and tk.value in "([{":
            paths.append(("" if not paths else key) if tk.value == "{" else None)
            key = None
        elif tk.kind == "p" and tk.value in ")]}":
            paths.pop()
            if not paths:
                break
            key = None
        elif tk.kind == "p" and tk.value == ",":
            key = None
        elif paths[-1] is not None and tk.kind in ("id", "str") and toks[k - 1].value in ("{", ",") \
                and k + 1 < len(toks) and toks[k + 1].value == ":":
            key = f"{paths[-1]}.{tk.value}" if paths[-1] else tk.value
            out.append(key)
    return out


def extract(text: str) -> list[RestCall | GraphqlText]:
    """REST calls and GraphQL documents in a JavaScript or TypeScript file."""
    if not PREFILTER.search(text):
        return []
    js = _Js(text)
    uses: list[RestCall | GraphqlText] = [*js.calls(), *js.graphql()]
    return uses
