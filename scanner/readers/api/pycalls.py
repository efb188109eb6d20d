"""Python calls that reach the GitLab API: requests/httpx verbs, python-gitlab managers,
object actions and raw `gl.http_*` calls; and the calls that only produce values
(`resp.json()`, `os.getenv(...)`, `gitlab.Gitlab(...)`, `requests.Session()`)."""

from __future__ import annotations

import ast
from typing import Protocol

from scanner.core.tree import Span
from scanner.readers.api import pygitlab as pg
from scanner.readers.api.model import GraphqlText, Param, RestCall
from scanner.readers.api.pystrings import Source
from scanner.readers.api.pyvalues import (
    Callable_,
    Client,
    Data,
    Env,
    Mgr,
    Module,
    Obj,
    Objs,
    ReadRef,
    Resp,
    Url,
    Value,
    literal,
    template,
)

Scope = dict[str, Value]


class Extractor(Protocol):
    """What a call needs of the walk over a module (`scanner.readers.api.pysource.Extractor`):
    values of expressions, the calls found so far, and source positions."""

    src: Source
    uses: list[RestCall | GraphqlText]
    query_context: bool

    def expr(self, node: ast.expr, scope: Scope) -> Value: ...
    def name_span(self, node: ast.AST, name: str) -> Span: ...
    def string_span(self, node: ast.AST, text: str) -> Span: ...
    def rest_call(self, method: str, url: str, node: ast.AST) -> RestCall | None: ...
    def path_span(self, node: ast.AST, path: str) -> Span: ...
    def dict_params(self, v: Value, node: ast.AST | None) -> list[Param]: ...
    def read(self, call: RestCall, name: str, span: Span) -> ReadRef: ...

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
