"""Python source: REST calls made with requests, httpx and python-gitlab, the response fields
the code reads from them, and GraphQL documents written as string literals.

A read belongs to a call only through values the extractor can follow
(`scanner.readers.api.python.values`): `requests.get(url).json()["version"]`,
`for r in resp.json(): r["version"]`, `runner = gl.runners.get(5); runner.version`. Docstrings
and comments are never calls.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator
from dataclasses import replace

from scanner.core.tree import Span
from scanner.readers.api.model import GraphqlText, Param, Read, RestCall
from scanner.readers.api.paths import api_url, query_pairs
from scanner.readers.api.python import managers as pg
from scanner.readers.api.python.source import MAX_DEPTH, PREFILTER, Source, parse_module
from scanner.readers.api.python.values import (
    Callable_,
    Client,
    Data,
    DictLit,
    Env,
    Mgr,
    Module,
    Obj,
    Objs,
    ReadRef,
    Resp,
    Url,
    Value,
    element,
    literal,
    strings,
    template,
)

Scope = dict[str, Value]
_GRAPHQL = re.compile(r"\s*(?:query|mutation|subscription|fragment)\b[^{}]*\{")
Use = RestCall | GraphqlText


class Extractor:
    def __init__(self, text: str) -> None:
        self.src = Source(text)
        self.uses: list[Use] = []
        self.query_context = False  # the string being evaluated is a `query` value
        self.documents: dict[int, int] = {}  # id of a GraphQL string literal → its index in `uses`

    # statements -------------------------------------------------------------------------
    def block(self, body: list[ast.stmt], scope: Scope) -> None:
        for stmt in body:
            self.stmt(stmt, scope)

    def stmt(self, s: ast.stmt, scope: Scope) -> None:
        if isinstance(s, (ast.Import, ast.ImportFrom)):
            self.imports(s, scope)
        elif isinstance(s, (ast.Assign, ast.AnnAssign)) and s.value is not None:
            v = self.expr(s.value, scope)
            for target in s.targets if isinstance(s, ast.Assign) else [s.target]:
                self.assign(target, v, scope, literal(s.value))
        elif isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant):
            return  # a docstring or a bare literal: documentation, not a call
        elif isinstance(s, (ast.For, ast.AsyncFor)):
            self.assign(s.target, element(self.expr(s.iter, scope)), scope)
            self.block(s.body + s.orelse, scope)
        elif isinstance(s, (ast.With, ast.AsyncWith)):
            for item in s.items:
                v = self.expr(item.context_expr, scope)
                if item.optional_vars is not None:
                    self.assign(item.optional_vars, v, scope)
            self.block(s.body, scope)
        elif isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.block(s.body, {**scope, **self.parameters(s.args)})
        elif isinstance(s, ast.ClassDef):
            self.block(s.body, dict(scope))
        else:
            for child in ast.iter_child_nodes(s):
                if isinstance(child, ast.expr):
                    self.expr(child, scope)
                elif isinstance(child, ast.stmt):
                    self.stmt(child, scope)
                elif isinstance(child, ast.ExceptHandler):
                    self.block(child.body, scope)

    def imports(self, s: ast.Import | ast.ImportFrom, scope: Scope) -> None:
        for alias in s.names:
            bound = alias.asname or alias.name.split(".")[0]
            if isinstance(s, ast.Import) and alias.name in ("requests", "httpx", "gitlab", "os"):
                scope[bound] = Module(alias.name)
            elif isinstance(s, ast.ImportFrom) and s.module in ("requests", "httpx", "gitlab", "os"):
                scope[bound] = Env() if alias.name == "environ" else Callable_(s.module, alias.name)

    def parameters(self, args: ast.arguments) -> Scope:
        out: Scope = {}
        for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
            ann = a.annotation
            name = ann.attr if isinstance(ann, ast.Attribute) else ann.id if isinstance(ann, ast.Name) else ""
            if name in pg.ANNOTATIONS:
                out[a.arg] = Obj("gitlab", "") if pg.ANNOTATIONS[name] == "gitlab" else None
        return out

    def assign(self, target: ast.expr, v: Value, scope: Scope, value: object = None) -> None:
        if isinstance(target, ast.Name):
            scope[target.id] = v
        elif isinstance(target, ast.Attribute):
            obj = scope.get(target.value.id) if isinstance(target.value, ast.Name) else None
            if isinstance(obj, Obj) and obj.kind != "gitlab":
                span = self.name_span(target, target.attr)
                self.uses.append(RestCall("PUT", obj.item, span, [Param(target.attr, span, value)]))
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self.assign(elt, None, scope)

    # expressions ------------------------------------------------------------------------
    def expr(self, node: ast.expr, scope: Scope) -> Value:
        if isinstance(node, ast.Name):
            return scope.get(node.id)
        if isinstance(node, ast.Constant):
            return self.constant(node)
        if isinstance(node, ast.JoinedStr):
            return Url("".join(str(v.value) if isinstance(v, ast.Constant) else template(self.expr(v.value, scope))
                               for v in node.values if isinstance(v, (ast.Constant, ast.FormattedValue))), node)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.expr(node.left, scope), self.expr(node.right, scope)
            joined = template(left) + template(right)
            return Url(joined, node) if isinstance(left, Url) or isinstance(right, Url) else None
        if isinstance(node, ast.Call):
            return call(self, node, scope)
        if isinstance(node, ast.Attribute):
            return self.attribute(node, scope)
        if isinstance(node, ast.Subscript):
            return self.subscript(node, scope)
        if isinstance(node, ast.Compare):
            return self.compare(node, scope)
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            return self.comprehension(node, scope)
        if isinstance(node, ast.Dict):
            return self.dict_literal(node, scope)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self.expr(child, scope)
        return None

    def constant(self, node: ast.Constant) -> Value:
        if not isinstance(node.value, str):
            return None
        text = node.value
        if "}" in text and (_GRAPHQL.match(text) or (self.query_context and text.lstrip().startswith("{"))):
            positions = self.src.string_positions(node)
            if positions:
                self.documents[id(node)] = len(self.uses)
                self.uses.append(GraphqlText(text, positions))
        return Url(text, node)

    def dict_literal(self, node: ast.Dict, scope: Scope) -> Value:
        found: dict[str, Value] = {}
        for k, v in zip(node.keys, node.values, strict=True):
            if k is not None:
                self.expr(k, scope)
            self.query_context = isinstance(k, ast.Constant) and k.value == "query"
            value = self.expr(v, scope)
            self.query_context = False
            if isinstance(k, ast.Constant) and k.value in ("query", "variables"):
                found[k.value] = value
        query, variables = found.get("query"), found.get("variables")
        at = self.documents.get(id(query.node)) if isinstance(query, Url) else None
        if at is not None and isinstance(variables, DictLit) and isinstance(use := self.uses[at], GraphqlText):
            # `{"query": Q, "variables": {...}}`: the keys of the variables are arguments too (of every
            # request that sends this document)
            keys = dict.fromkeys((*use.variables, *_key_paths(variables.node)))
            self.uses[at] = replace(use, variables=tuple(keys))
        return DictLit(node)

    def comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp, scope: Scope) -> Value:
        inner = dict(scope)
        for gen in node.generators:
            self.assign(gen.target, element(self.expr(gen.iter, inner)), inner)
            for cond in gen.ifs:
                self.expr(cond, inner)
        for part in (node.key, node.value) if isinstance(node, ast.DictComp) else (node.elt,):
            self.expr(part, inner)
        return None

    def attribute(self, node: ast.Attribute, scope: Scope) -> Value:
        recv = self.expr(node.value, scope)
        if isinstance(recv, Module) and recv.name == "os" and node.attr in ("environ", "getenv"):
            return Env(getter=node.attr == "getenv")
        if isinstance(recv, Module) and recv.name == "gitlab" and node.attr == "Gitlab":
            return Callable_("gitlab", "Gitlab")  # `gitlab.Gitlab.from_config(...)`
        if isinstance(recv, Env) and node.attr == "get":
            return Env(getter=True)
        if isinstance(recv, Obj):
            managed = pg.MANAGERS.get((recv.kind, node.attr))
            if managed is not None:
                return Mgr(managed[1], recv.item + managed[0])
            if recv.call is not None:
                return self.read(recv.call, node.attr, self.name_span(node, node.attr))
        return None

    def subscript(self, node: ast.Subscript, scope: Scope) -> Value:
        recv = self.expr(node.value, scope)
        key = node.slice
        self.expr(key, scope)
        name = key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else None
        if isinstance(recv, Env) and name:
            return Url("$" + name)
        if isinstance(recv, Data):
            return self.read(recv.call, name, self.string_span(key, name)) if name else Data(recv.call)
        if isinstance(recv, Objs) and name is None:
            return Obj(recv.kind, recv.item, recv.call)
        return None

    def compare(self, node: ast.Compare, scope: Scope) -> Value:
        left = self.expr(node.left, scope)
        rights = [self.expr(c, scope) for c in node.comparators]
        if isinstance(node.ops[0], (ast.Eq, ast.NotEq, ast.In, ast.NotIn)):
            if isinstance(left, ReadRef):
                left.compare(strings(node.comparators[0]))
            elif isinstance(rights[0], ReadRef):
                rights[0].compare(strings(node.left))
        return None

    # helpers ----------------------------------------------------------------------------
    def read(self, call: RestCall, name: str, span: Span) -> ReadRef:
        call.reads.append(Read(name, span))
        return ReadRef(call, len(call.reads) - 1)

    def name_span(self, node: ast.AST, name: str) -> Span:
        line, col = self.src.end(node)
        return (line, col - len(name), line, col)

    def string_span(self, node: ast.AST, text: str) -> Span:
        line, col = self.src.start(node)
        return (line, col + 1, line, col + 1 + len(text))

    def rest_call(self, method: str, url: str, node: ast.AST) -> RestCall | None:
        parts = api_url(url)
        if parts is None:
            return None
        call = RestCall(method, parts.path, self.path_span(node, parts.path))
        for name, _, value in query_pairs(parts.query):
            call.params.append(Param(name, self.path_span(node, name + "="), value))
        self.uses.append(call)
        return call

    def path_span(self, node: ast.AST, path: str) -> Span:
        """Where the literal start of `path` is written inside `node`, else the node's start."""
        line, col = self.src.start(node)
        literal_part = path.split("{", 1)[0]
        text = self.src.lines[line - 1] if line <= len(self.src.lines) else ""
        at = text.find(literal_part, col - 1) if literal_part else -1
        if at >= 0:
            return (line, at + 1, line, at + 1 + len(literal_part))
        return (line, col, line, col + 1)

    def dict_params(self, v: Value, node: ast.AST | None) -> list[Param]:
        d = v.node if isinstance(v, DictLit) else node if isinstance(node, ast.Dict) else None
        if d is None:
            return []
        pairs = zip(d.keys, d.values, strict=True)
        return [Param(k.value, self.string_span(k, k.value), literal(val)) for k, val in pairs
                if isinstance(k, ast.Constant) and isinstance(k.value, str)]


def extract(text: str) -> list[Use]:
    """Every REST call and GraphQL document in a Python file that parses."""
    if not PREFILTER.search(text):
        return []
    ex = Extractor(text)
    body = parse_module(text).body  # nested at most MAX_DEPTH: the walk below recurses per level
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * MAX_DEPTH + 500))
    try:
        ex.block(body, {})
    finally:
        sys.setrecursionlimit(limit)
    return ex.uses


def _key_paths(node: ast.Dict, prefix: str = "") -> Iterator[str]:
    """`a`, `a.b`, … for the literal string keys of a dict display, nested displays included."""
    for k, v in zip(node.keys, node.values, strict=True):
        if isinstance(k, ast.Constant) and isinstance(k.value, str):
            yield prefix + k.value
            if isinstance(v, ast.Dict):
                yield from _key_paths(v, prefix + k.value + ".")


# calls ----------------------------------------------------------------------------------------

_VERBS = frozenset({"get", "post", "put", "patch", "delete", "head", "request"})


def call(ex: Extractor, node: ast.Call, scope: Scope) -> Value:
    """Evaluate a call: its receiver and arguments first (they may be calls too), then the call."""
    f = node.func
    recv = ex.expr(f.value, scope) if isinstance(f, ast.Attribute) else ex.expr(f, scope)
    args = [ex.expr(a, scope) for a in node.args]
    kwargs: dict[str, Value] = {}
    for kw in node.keywords:
        ex.query_context = kw.arg == "query"
        kwargs[kw.arg or ""] = ex.expr(kw.value, scope)
        ex.query_context = False
    name = f.attr if isinstance(f, ast.Attribute) else ""
    if isinstance(recv, Callable_):
        return _imported(recv, node, args, kwargs, ex)
    if isinstance(recv, (Module, Client)):
        return _module_call(ex, recv, name, node, args, kwargs)
    first = node.args[0] if node.args else None
    if isinstance(recv, Env) and (recv.getter or name == "get") and isinstance(first, ast.Constant):
        return Url("$" + str(first.value))  # `os.getenv("X")`, `os.environ.get("X")`
    if isinstance(recv, Resp) and name == "json":
        return Data(recv.call)
    if isinstance(recv, Data) and name == "get" and node.args:
        key = node.args[0]
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            return ex.read(recv.call, key.value, ex.string_span(key, key.value))
    if isinstance(recv, Mgr):
        return _manager_call(ex, recv, name, node, args)
    if isinstance(recv, Obj):
        return _object_call(ex, recv, name, node, args, kwargs)
    return None


def _imported(fn: Callable_, node: ast.Call, args: list[Value], kwargs: dict[str, Value], ex: Extractor) -> Value:
    if fn.module == "gitlab" and fn.name == "Gitlab":
        return Obj("gitlab", "")
    if fn.module in ("requests", "httpx") and fn.name in ("Session", "session", "Client", "AsyncClient"):
        return Client(template(kwargs.get("base_url")) if "base_url" in kwargs else "")
    if fn.module in ("requests", "httpx") and fn.name in _VERBS:
        return _http(ex, Client(), fn.name, node, args, kwargs)
    if fn.module == "os" and fn.name == "getenv" and node.args and isinstance(node.args[0], ast.Constant):
        return Url("$" + str(node.args[0].value))
    return None


def _module_call(ex: Extractor, recv: Module | Client, name: str, node: ast.Call, args: list[Value],
                 kwargs: dict[str, Value]) -> Value:
    if isinstance(recv, Module):
        if recv.name == "gitlab" and name == "Gitlab":
            return Obj("gitlab", "")
        if recv.name in ("requests", "httpx") and name in ("Session", "session", "Client", "AsyncClient"):
            return Client(template(kwargs.get("base_url")) if "base_url" in kwargs else "")
        if recv.name == "os" and name == "getenv" and node.args and isinstance(node.args[0], ast.Constant):
            return Url("$" + str(node.args[0].value))
        if recv.name not in ("requests", "httpx"):
            return None
        recv = Client()
    return _http(ex, recv, name, node, args, kwargs) if name in _VERBS else None


def _http(
    ex: Extractor, client: Client, verb: str, node: ast.Call, args: list[Value], kwargs: dict[str, Value]
) -> Value:
    if verb == "request":
        method_node = node.args[0] if node.args else None
        method = str(method_node.value).upper() if isinstance(method_node, ast.Constant) else "GET"
        url_node, url = (node.args[1], args[1]) if len(node.args) > 1 else (_kw(node, "url"), kwargs.get("url"))
    else:
        method = verb.upper()
        url_node, url = (node.args[0], args[0]) if node.args else (_kw(node, "url"), kwargs.get("url"))
    if url_node is None:
        return None
    text = template(url)
    absolute = "://" in text or text.startswith("$") or not client.base
    full = text if absolute else client.base.rstrip("/") + "/" + text.lstrip("/")
    written = url.node if isinstance(url, Url) and url.node is not None else url_node
    rest = ex.rest_call(method, full, written)
    if rest is None:
        return None
    for key in ("params", "data", "json"):
        rest.params.extend(ex.dict_params(kwargs.get(key), _kw(node, key)))
    return Resp(rest)


def _kw(node: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in node.keywords if k.arg == name), None)


def _manager_call(ex: Extractor, mgr: Mgr, name: str, node: ast.Call, args: list[Value]) -> Value:
    item = pg.item_path(mgr.base, mgr.kind)
    span = ex.name_span(node.func, name)
    if name == "get":
        rest = RestCall("GET", item, span)
    elif name in ("list", "all"):
        rest = RestCall("GET", mgr.base + ("/all" if name == "all" and mgr.base == "/runners" else ""), span)
    elif name == "create":
        rest = RestCall("POST", mgr.base, span, ex.dict_params(args[0] if args else None, _arg(node, 0)))
    elif name == "update":
        rest = RestCall("PUT", item, span, ex.dict_params(args[1] if len(args) > 1 else None, _arg(node, 1)))
    elif name == "delete":
        rest = RestCall("DELETE", item, span)
    else:
        return None
    rest.params.extend(_keyword_params(ex, node))
    ex.uses.append(rest)
    if name in ("list", "all"):
        return Objs(mgr.kind, item, rest)
    return Obj(mgr.kind, item, rest) if name in ("get", "create") else None


def _arg(node: ast.Call, i: int) -> ast.expr | None:
    return node.args[i] if len(node.args) > i else None


def _keyword_params(ex: Extractor, node: ast.Call) -> list[Param]:
    """Query parameters given as keywords; `get_all=True` and friends page with offsets (`page`)."""
    out: list[Param] = []
    keyset = any(k.arg == "pagination" and literal(k.value) == "keyset" for k in node.keywords)
    for k in node.keywords:
        if k.arg is None:
            continue
        span = ex.src.start(k)
        where = (span[0], span[1], span[0], span[1] + len(k.arg))
        if k.arg not in pg.CLIENT_KWARGS:
            out.append(Param(k.arg, where, literal(k.value)))
        elif (k.arg == "page" or (k.arg in pg.OFFSET_PAGING and literal(k.value) is True)) and not keyset:
            out.append(Param("page", where, literal(k.value)))
    return out


def _object_call(ex: Extractor, obj: Obj, name: str, node: ast.Call, args: list[Value],
                 kwargs: dict[str, Value]) -> Value:
    if obj.kind == "gitlab" and name in pg.RAW_CALLS and node.args:
        path = template(args[0])
        if not path.startswith("/"):
            return None
        rest = RestCall(pg.RAW_CALLS[name], path.split("?", 1)[0], ex.path_span(node.args[0], path))
        for key in ("query_data", "post_data"):
            rest.params.extend(ex.dict_params(kwargs.get(key), _kw(node, key)))
        ex.uses.append(rest)
        return Data(rest)
    action = pg.ACTIONS.get((obj.kind, name))
    if action is not None:
        rest = RestCall(action[0], obj.item + action[1], ex.name_span(node.func, name))
        ex.uses.append(rest)
        return Data(rest)
    return None
