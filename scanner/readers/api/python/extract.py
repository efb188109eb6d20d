"""Python source: REST calls made with requests, httpx, urllib, http.client and python-gitlab, the
response fields the code reads from them, and GraphQL documents written as string literals.

Values are followed (`scanner.readers.api.python.values`) the way the code passes them:

* through assignments, loops, comprehensions and containers (`clients[url] = gitlab.Gitlab(…)`,
  then `for url, gl in clients.items()`), in the order statements run;
* into the file's own functions and methods: a call of a helper is its body read again with the
  caller's arguments (`def api(method, path): return requests.request(method, f"{BASE}/{path}")`
  then `api("PUT", "projects/1/integrations/slack")`; keywords it passes on with `**kw` included,
  and a `**params` it sends as the query, form or JSON: each keyword a field where the caller wrote it),
  helpers of helpers included, at most `INLINE_DEPTH` calls deep and within a budget of statements
  proportional to the file;
* through classes: attributes set on the class or its instance (`self.base = f"{url}/api/v4"`,
  `self.gl = gitlab.Gitlab(…)`), methods called on `self`, and classes deriving from a session;
* through URL building: f-strings, `+`, `.format`, `%`, `urljoin`, `"/".join`, a query from
  `urlencode({...})`; a URL is GitLab's
  REST API where it holds `/api/v4`, or starts with `CI_API_V4_URL` or an environment variable
  named for the REST base (`GITLAB_API_URL`, `source.API_ENV`);
* into the request fields of a dict built before the call: a display, `dict(k=v)`, another such
  dict spread into it (`**d`), and keys set on it since (`payload["private_profile"] = None`,
  `payload.update(…)`), each reported where its key is written;
* to python-gitlab objects that arrive as parameters, named `gl`, `project`, `group` in a file that
  imports python-gitlab (or annotated with its classes), and through their managers and methods
  (`scanner.readers.api.python.managers`).

Module-level functions and methods are read once in place after the module's statements (so every
name the module defines is known), and again wherever they are called. A call is reported once,
at the first character of its path written in the statement being read (the caller's argument,
not the helper's body), else where its path begins. A read belongs to a call only
through values the extractor can follow: `requests.get(url).json()["version"]`,
`for r in resp.json(): r["version"]`, `runner = gl.runners.get(5); runner.version`. Docstrings and
comments are never calls.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import replace

from scanner.core.tree import Span
from scanner.readers.api.model import UNKNOWN, GraphqlText, Param, Pos, Read, RestCall
from scanner.readers.api.paths import api_url, query_pairs
from scanner.readers.api.python import managers as pg
from scanner.readers.api.python.source import API_ENV, MAX_DEPTH, PREFILTER, Source, parse_module
from scanner.readers.api.python.values import (
    DICT_KEYS,
    UNKNOWN_PART,
    Callable_,
    ClassInfo,
    ClassRef,
    Client,
    Data,
    DictLit,
    Env,
    Func,
    Keywords,
    Many,
    Mgr,
    Module,
    Obj,
    Part,
    ReadRef,
    Req,
    Resp,
    Tup,
    Url,
    Value,
    element,
    join,
    literal,
    strings,
    template,
    url,
)

Scope = dict[str, Value]
Use = RestCall | GraphqlText
INLINE_DEPTH = 4  # calls of the file's own functions inside each other, at most
INLINE_FACTOR = 8  # statements read in called functions per statement of the file, at most
_GRAPHQL = re.compile(r"\s*(?:query|mutation|subscription|fragment)\b[^{}]*\{")
_VERBS = frozenset({"get", "post", "put", "patch", "delete", "head", "request"})
_SESSIONS = frozenset({"Session", "session", "Client", "AsyncClient", "BaseUrlSession", "HTTPConnection",
                       "HTTPSConnection"})
_MODULES = frozenset({"requests", "httpx", "gitlab", "os", "urllib", "urllib.request", "urllib.parse", "http.client",
                      "requests_toolbelt", "requests_toolbelt.sessions", "posixpath"})
_IMPORTS_GITLAB = re.compile(r"^[ \t]*(?:import|from)[ \t]+gitlab\b", re.M)
_FORMAT_FIELD = re.compile(r"\{\{|\}\}|\{[^{}]*\}")
_PERCENT_FIELD = re.compile(r"%%|%(?:\([^)]*\))?[-#0 +]*\d*(?:\.\d+)?[sdirf]")


class Extractor:
    def __init__(self, text: str) -> None:
        self.src = Source(text)
        self.uses: list[Use] = []
        self.calls: dict[tuple[object, ...], RestCall] = {}  # the calls found, by what they are and where
        self.query_context = False  # the string being evaluated is a `query` value
        self.documents: dict[int, int] = {}  # id of a GraphQL string literal → its index in `uses`
        self.globals: Scope = {}
        self.classes: dict[int, ClassInfo] = {}
        self.deferred: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, ClassInfo | None]] = []
        self.inlining: list[ast.AST] = []  # the functions being read for a call, outermost first
        self.returns: list[list[Value]] = []
        self.budget = INLINE_FACTOR * (text.count("\n") + 1) + 256  # statements, at most about one per line
        self.site: tuple[int, int] = (0, 0)  # the lines of the statement being read in place
        self.fstrings: dict[int, tuple[Pos, ...] | None] = {}
        self.literals: dict[int, tuple[Pos, ...] | None] = {}
        self.uses_gitlab = _IMPORTS_GITLAB.search(text) is not None

    def run(self, module: ast.Module) -> list[Use]:
        self.block(module.body, self.globals)
        done: set[int] = set()
        while self.deferred:  # module-level functions and methods, once each, every name known
            fn, owner = self.deferred.pop(0)
            if id(fn) in done:
                continue
            done.add(id(fn))
            scope = {**self.globals, **self.parameters(fn.args, fn, owner)}
            self.block(fn.body, scope)
        return self.uses

    # statements -------------------------------------------------------------------------
    def block(self, body: list[ast.stmt], scope: Scope) -> None:
        for stmt in body:
            if self.inlining:
                self.budget -= 1
                if self.budget <= 0:
                    return
            self.stmt(stmt, scope)

    def stmt(self, s: ast.stmt, scope: Scope) -> None:
        if not self.inlining:
            self.site = (s.lineno, s.end_lineno or s.lineno)
        if isinstance(s, (ast.Import, ast.ImportFrom)):
            self.imports(s, scope)
        elif isinstance(s, (ast.Assign, ast.AnnAssign)) and s.value is not None:
            v = self.expr(s.value, scope)
            for target in s.targets if isinstance(s, ast.Assign) else [s.target]:
                self.assign(target, v, scope, literal(s.value))
        elif isinstance(s, ast.AugAssign):
            v = self.expr(s.value, scope)
            if isinstance(s.target, ast.Name) and isinstance(s.op, ast.Add):
                old = scope.get(s.target.id)
                scope[s.target.id] = join(old, v) if isinstance(old, Url) else None
        elif isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant):
            return  # a docstring or a bare literal: documentation, not a call
        elif isinstance(s, ast.Expr):
            self.expr(s.value, scope)
            self.dict_update(s.value, scope)
        elif isinstance(s, ast.Return):
            v = self.expr(s.value, scope) if s.value is not None else None
            if self.returns and v is not None:
                self.returns[-1].append(v)
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
            scope[s.name] = Func(s)
            if scope is self.globals:
                self.deferred.append((s, None))
            elif not self.inlining:
                self.block(s.body, {**scope, **self.parameters(s.args, s, None)})
        elif isinstance(s, ast.ClassDef):
            self.define_class(s, scope)
        else:
            for child in ast.iter_child_nodes(s):
                if isinstance(child, ast.expr):
                    self.expr(child, scope)
                elif isinstance(child, ast.stmt):
                    self.stmt(child, scope)
                elif isinstance(child, (ast.ExceptHandler, ast.match_case)):
                    self.block(child.body, scope)

    def define_class(self, s: ast.ClassDef, scope: Scope) -> None:
        info = self.classes.get(id(s)) or ClassInfo(s)
        self.classes[id(s)] = info
        scope[s.name] = ClassRef(info, instance=False)
        for base in s.bases:
            b = self.expr(base, scope)
            if isinstance(b, Callable_) and b.name in _SESSIONS or isinstance(b, ClassRef) and b.info.session:
                info.session = True
        inner: Scope = dict(scope)
        for stmt in s.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                info.methods[stmt.name] = stmt
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
                v = self.expr(stmt.value, inner)
                for target in stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]:
                    if isinstance(target, ast.Name):
                        info.attrs[target.id] = v
                        inner[target.id] = v
        if self.inlining:
            return
        # `__init__` first: the attributes it sets are what the other methods read
        ordered = sorted(info.methods.values(), key=lambda f: f.name != "__init__")
        self.deferred.extend((fn, info) for fn in ordered)

    def imports(self, s: ast.Import | ast.ImportFrom, scope: Scope) -> None:
        for alias in s.names:
            if isinstance(s, ast.Import):
                if alias.name in _MODULES or alias.name.split(".")[0] in _MODULES:
                    bound = alias.asname or alias.name.split(".")[0]
                    scope[bound] = Module(alias.name if alias.asname else alias.name.split(".")[0])
            elif s.module in _MODULES:
                name = f"{s.module}.{alias.name}"
                bound = alias.asname or alias.name
                scope[bound] = Module(name) if name in _MODULES else (
                    Env() if alias.name == "environ" else Callable_(s.module, alias.name))

    def parameters(self, args: ast.arguments, fn: ast.AST, owner: ClassInfo | None) -> Scope:
        """What a function's parameters hold when it is read in place: `self` and `cls`, and
        python-gitlab objects named by their annotation or, in a file using python-gitlab, their name."""
        out: Scope = {}
        every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
        decorators = {ast.unparse(d) for d in getattr(fn, "decorator_list", [])}
        for k, a in enumerate(every):
            if k == 0 and owner is not None and "staticmethod" not in decorators:
                out[a.arg] = ClassRef(owner, instance="classmethod" not in decorators)
                continue
            ann = a.annotation
            name = ann.attr if isinstance(ann, ast.Attribute) else ann.id if isinstance(ann, ast.Name) else ""
            kind = name if name in pg.ANNOTATIONS else pg.NAMED.get(a.arg) if self.uses_gitlab else None
            if kind is not None:
                out[a.arg] = pg.named(kind)
        return out

    def assign(self, target: ast.expr, v: Value, scope: Scope, value: object = UNKNOWN) -> None:
        """Bind `v` to the target; `value` is the Python value assigned where it is a literal."""
        if isinstance(target, ast.Name):
            scope[target.id] = v
        elif isinstance(target, ast.Attribute):
            owner = self.expr(target.value, scope)
            if isinstance(owner, ClassRef):
                if v is not None or target.attr not in owner.info.attrs:
                    owner.info.attrs[target.attr] = v
            elif isinstance(owner, Obj) and owner.kind != "Gitlab" and owner.item:
                span = self.name_span(target, target.attr)
                self.emit(RestCall(pg.save_method(owner.kind), owner.item, span, [Param(target.attr, span, value)]))
        elif isinstance(target, ast.Subscript):
            self.expr(target.slice, scope)
            if isinstance(target.value, ast.Name):
                old = scope.get(target.value.id)
                if old is None or isinstance(old, (Many, DictLit)):
                    scope[target.value.id] = self.stored(old, target.slice, v, value)
            elif isinstance(target.value, ast.Attribute):
                owner = self.expr(target.value.value, scope)
                if isinstance(owner, ClassRef):
                    old = owner.info.attrs.get(target.value.attr)
                    if old is None or isinstance(old, (Many, DictLit)):
                        owner.info.attrs[target.value.attr] = self.stored(old, target.slice, v, value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = v.items if isinstance(v, Tup) and len(v.items) == len(target.elts) else (None,) * len(target.elts)
            for elt, item in zip(target.elts, items, strict=True):
                self.assign(elt, item, scope)

    def stored(self, old: Many | DictLit | None, key: ast.expr, v: Value, value: object) -> Many | DictLit:
        """A container after `old[key] = v`: a dict built in the file keeps its keys and gains a
        string key (a request field where the dict is sent); anything else holds `v`."""
        if not isinstance(old, DictLit):
            return Many(v)
        added = old.added
        if isinstance(key, ast.Constant) and isinstance(key.value, str) and len(added) < DICT_KEYS:
            added = (*added, Param(key.value, self.string_span(key, key.value), value))
        return DictLit(old.node, added, v if v is not None else old.item)

    # expressions ------------------------------------------------------------------------
    def expr(self, node: ast.expr | None, scope: Scope) -> Value:
        if node is None:
            return None
        if isinstance(node, ast.Name):
            return scope.get(node.id)
        if isinstance(node, ast.Constant):
            return self.constant(node)
        if isinstance(node, ast.JoinedStr):
            return self.fstring(node, scope)
        if isinstance(node, ast.BinOp):
            left, right = self.expr(node.left, scope), self.expr(node.right, scope)
            if isinstance(node.op, ast.Add) and (isinstance(left, Url) or isinstance(right, Url)):
                return join(left, right)
            if isinstance(node.op, ast.Mod) and isinstance(left, Url):
                return _percent(left, right)
            return None
        if isinstance(node, ast.Call):
            return self.call(node, scope)
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
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return Tup(tuple(self.expr(e, scope) for e in node.elts))
        if isinstance(node, ast.IfExp):
            self.expr(node.test, scope)
            body, orelse = self.expr(node.body, scope), self.expr(node.orelse, scope)
            return body if body is not None else orelse
        if isinstance(node, ast.BoolOp):
            values = [self.expr(v, scope) for v in node.values]
            return next((v for v in values if v is not None), None)
        if isinstance(node, ast.NamedExpr):
            v = self.expr(node.value, scope)
            self.assign(node.target, v, scope)
            return v
        if isinstance(node, ast.Await):
            return self.expr(node.value, scope)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self.expr(child, scope)
        return None

    def constant(self, node: ast.Constant) -> Value:
        if not isinstance(node.value, str):
            return None
        text = node.value
        if "}" in text and (_GRAPHQL.match(text) or (self.query_context and text.lstrip().startswith("{"))) \
                and id(node) not in self.documents:
            positions = self.src.string_positions(node)
            if positions:
                self.documents[id(node)] = len(self.uses)
                self.uses.append(GraphqlText(text, positions))
        return url(text, node)

    def fstring(self, node: ast.JoinedStr, scope: Scope) -> Url:
        parts: list[Part] = []
        at = 0  # offset of the next literal character among the f-string's literal characters
        for v in node.values:
            if isinstance(v, ast.Constant):
                parts.append(Part(str(v.value), node, at))
                at += len(str(v.value))
            elif isinstance(v, ast.FormattedValue):
                inner = self.expr(v.value, scope)
                parts.extend(inner.parts if isinstance(inner, Url) else (UNKNOWN_PART,))
        return Url(tuple(parts))

    def dict_literal(self, node: ast.Dict, scope: Scope) -> Value:
        found: dict[str, Value] = {}
        spread: list[Param] = []  # the fields of a dict built in the file spread into this one (`**d`)
        for k, v in zip(node.keys, node.values, strict=True):
            if k is not None:
                self.expr(k, scope)
            self.query_context = isinstance(k, ast.Constant) and k.value == "query"
            value = self.expr(v, scope)
            self.query_context = False
            if k is None and isinstance(value, DictLit):
                spread.extend(self.dict_params(value, None))
            if isinstance(k, ast.Constant) and k.value in ("query", "variables"):
                found[k.value] = value
        query, variables = found.get("query"), found.get("variables")
        node_of = query.parts[0].node if isinstance(query, Url) and len(query.parts) == 1 else None
        at = self.documents.get(id(node_of)) if node_of is not None else None
        if at is not None and isinstance(variables, DictLit) and variables.node is not None \
                and isinstance(use := self.uses[at], GraphqlText):
            # `{"query": Q, "variables": {...}}`: the keys of the variables are arguments too (of every
            # request that sends this document)
            keys = dict.fromkeys((*use.variables, *_key_paths(variables.node)))
            self.uses[at] = replace(use, variables=tuple(keys))
        return DictLit(node, tuple(spread[:DICT_KEYS]))

    def dict_update(self, node: ast.expr, scope: Scope) -> None:
        """`d.update({"k": v})`, `d.update(k=v)` on a dict built in the file: it gains those fields."""
        f = node.func if isinstance(node, ast.Call) else None
        if not (isinstance(node, ast.Call) and isinstance(f, ast.Attribute) and f.attr == "update"
                and isinstance(f.value, ast.Name)):
            return
        old = scope.get(f.value.id)
        if not isinstance(old, DictLit):
            return
        given = self.dict_params(None, node.args[0]) if len(node.args) == 1 else []
        fields = (*old.added, *given, *self.keyword_fields(node))
        scope[f.value.id] = DictLit(old.node, fields[:DICT_KEYS], old.item)

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
        name = node.attr
        if isinstance(recv, Module):
            dotted = f"{recv.name}.{name}"
            if dotted in _MODULES:
                return Module(dotted)
            if recv.name == "os" and name in ("environ", "getenv"):
                return Env(getter=name == "getenv")
            return Callable_(recv.name, name)
        if isinstance(recv, Env) and name == "get":
            return Env(getter=True)
        if isinstance(recv, Callable_) and recv.module == "gitlab" and recv.name == "Gitlab":
            return recv  # `gitlab.Gitlab.from_config`
        if isinstance(recv, ClassRef):
            info = recv.info
            if name in info.attrs:
                return info.attrs[name]
            if name in info.methods:
                return Func(info.methods[name], recv)
            kind = pg.NAMED.get(name) if self.uses_gitlab else None
            return pg.named(kind) if kind is not None else None
        if isinstance(recv, Obj):
            managed = pg.manager(recv.kind, name)
            if managed is not None:
                return managed
            if recv.call is not None:
                return self.read(recv.call, name, self.name_span(node, name))
        return None

    def subscript(self, node: ast.Subscript, scope: Scope) -> Value:
        recv = self.expr(node.value, scope)
        key = node.slice
        self.expr(key, scope)
        name = key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else None
        if isinstance(recv, Env) and name:
            return url("$" + name)
        if isinstance(recv, Data):
            return self.read(recv.call, name, self.string_span(key, name)) if name else Data(recv.call)
        if isinstance(recv, Many) and (name is None or not isinstance(recv.item, Obj)):
            return recv.item
        if isinstance(recv, DictLit):
            return recv.item
        if isinstance(recv, Tup) and isinstance(key, ast.Constant) and isinstance(key.value, int) \
                and -len(recv.items) <= key.value < len(recv.items):
            return recv.items[key.value]
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

    # calls ------------------------------------------------------------------------------
    def call(self, node: ast.Call, scope: Scope) -> Value:
        """Evaluate a call: its receiver and arguments first (they may be calls too), then the call."""
        f = node.func
        recv = self.expr(f.value, scope) if isinstance(f, ast.Attribute) else self.expr(f, scope)
        args = [self.expr(a, scope) for a in node.args]
        kwargs: dict[str, Value] = {}
        fields = {p.name: p for p in self.keyword_fields(node)}  # where each keyword is written
        for kw in node.keywords:
            self.query_context = kw.arg == "query"
            value = self.expr(kw.value, scope)
            self.query_context = False
            if kw.arg is None and isinstance(value, Keywords):
                kwargs.update(value.given)  # `**kw` passed on: the keywords its caller gave
                fields.update((p.name, p) for p in value.fields)
            else:
                kwargs[kw.arg or ""] = value
        name = f.attr if isinstance(f, ast.Attribute) else ""
        if isinstance(f, ast.Name) or (isinstance(recv, Func) or _is_class(recv)) and not name:
            return self.function_call(recv, node, args, kwargs, fields)
        if isinstance(recv, ClassRef):
            return self.method_call(recv, name, node, args, kwargs, fields)
        if isinstance(recv, Callable_):
            return self.imported(Callable_(recv.module, f"{recv.name}.{name}" if name else recv.name), node, args,
                                 kwargs)
        if isinstance(recv, Module):
            return self.imported(Callable_(recv.name, name), node, args, kwargs)
        if isinstance(recv, Client):
            return self.http(recv, name, node, args, kwargs) if name in _VERBS else None
        first = node.args[0] if node.args else None
        if isinstance(recv, Env) and (recv.getter or name == "get") and isinstance(first, ast.Constant):
            return url("$" + str(first.value))  # `os.getenv("X")`, `os.environ.get("X")`
        if isinstance(recv, Resp) and name == "json":
            return Data(recv.call)
        if isinstance(recv, Data) and name == "get" and node.args:
            key = node.args[0]
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                return self.read(recv.call, key.value, self.string_span(key, key.value))
        if isinstance(recv, Mgr):
            return self.manager_call(recv, name, node, args)
        if isinstance(recv, Obj):
            return self.object_call(recv, name, node, args, kwargs)
        if isinstance(recv, Url):
            return _string_method(recv, name, args)
        if isinstance(recv, (Many, DictLit)) and name in ("items", "values", "keys"):
            held: Value = recv.key if isinstance(recv, Many) else None
            return Many(Tup((held, recv.item))) if name == "items" else Many(recv.item if name == "values" else held)
        if isinstance(recv, (Many, DictLit)) and name in ("get", "pop", "setdefault"):
            return recv.item
        return None

    def function_call(self, fn: Value, node: ast.Call, args: list[Value], kwargs: dict[str, Value],
                      fields: dict[str, Param] | None = None) -> Value:
        if isinstance(fn, Callable_):
            return self.imported(fn, node, args, kwargs)
        if isinstance(fn, ClassRef) and not fn.instance:
            instance = ClassRef(fn.info, instance=True)
            init = fn.info.methods.get("__init__")
            if init is not None:
                self.inline(Func(init, instance), args, kwargs, fields)
            return instance
        if isinstance(fn, Func):
            return self.inline(fn, args, kwargs, fields)
        if fn is None and isinstance(node.func, ast.Name) and node.func.id == "dict" and not node.args:
            return DictLit(None, tuple(self.keyword_fields(node)))  # `dict(username=…, private_profile=None)`
        return None

    def method_call(self, recv: ClassRef, name: str, node: ast.Call, args: list[Value],
                    kwargs: dict[str, Value], fields: dict[str, Param] | None = None) -> Value:
        method = recv.info.methods.get(name)
        if method is not None:
            return self.inline(Func(method, recv), args, kwargs, fields)
        held = recv.info.attrs.get(name)
        if isinstance(held, Func) or _is_class(held):
            return self.function_call(held, node, args, kwargs, fields)
        if recv.info.session and name in _VERBS:  # a class deriving from a session
            base = recv.info.attrs.get("base_url")
            return self.http(Client(base if isinstance(base, Url) else None), name, node, args, kwargs)
        return None

    def inline(self, fn: Func, args: list[Value], kwargs: dict[str, Value],
               fields: dict[str, Param] | None = None) -> Value:
        """A call of one of the file's functions: its body read with the caller's arguments; its value
        is the first value it returns that the reader knows. `fields` says where the caller wrote
        each keyword, for those that land in the function's `**kwargs`."""
        node = fn.node
        if node in self.inlining or len(self.inlining) >= INLINE_DEPTH or self.budget <= 0:
            return None
        params = [*node.args.posonlyargs, *node.args.args]
        scope: Scope = dict(self.globals)
        given = list(args)
        if fn.bound is not None and params:
            scope[params[0].arg] = fn.bound
            params = params[1:]
        for p, v in zip(params, given, strict=False):
            scope[p.arg] = v
        named = {p.arg for p in [*params, *node.args.kwonlyargs]}
        for name in named & kwargs.keys():
            scope[name] = kwargs[name]
        if node.args.kwarg is not None:
            rest = [(k, v) for k, v in kwargs.items() if k and k not in named]
            scope[node.args.kwarg.arg] = Keywords(
                tuple(rest), tuple(fields[k] for k, _ in rest if fields is not None and k in fields))
        self.inlining.append(node)
        self.returns.append([])
        try:
            self.block(node.body, scope)
        finally:
            self.inlining.pop()
            returned = self.returns.pop()
        return next((v for v in returned if v is not None), None)

    def imported(self, fn: Callable_, node: ast.Call, args: list[Value], kwargs: dict[str, Value]) -> Value:
        module, name = fn.module, fn.name
        first = node.args[0] if node.args else None
        if module == "gitlab" and name.split(".")[0] == "Gitlab":
            return Obj("Gitlab", "")  # `gitlab.Gitlab(…)`, `gitlab.Gitlab.from_config()`
        if name in _SESSIONS:
            base = kwargs.get("base_url")
            return Client(base if isinstance(base, Url) else None)
        if module in ("requests", "httpx") and name in _VERBS:
            return self.http(Client(), name, node, args, kwargs)
        if module == "os" and name == "getenv" and isinstance(first, ast.Constant):
            return url("$" + str(first.value))
        if module in ("urllib.parse", "urllib") and name in ("urljoin", "parse.urljoin") and len(args) >= 2:
            return _urljoin(args[0], args[1])
        if module in ("urllib.parse", "urllib") and name in ("urlencode", "parse.urlencode") and args:
            return _urlencode(args[0])
        if module in ("os.path", "posixpath") or name in ("path.join", "join") and module in ("os", "posixpath"):
            return _slash_join(args)
        if module in ("urllib.request", "urllib") and name in ("Request", "request.Request") and args:
            data = args[1] if len(args) > 1 else kwargs.get("data")
            method = _literal_text(next((k.value for k in node.keywords if k.arg == "method"), None))
            verb = (method or ("POST" if data is not None or "data" in kwargs else "GET")).upper()
            call = self.rest_call(verb, args[0], node.args[0], self.dict_params(data, _kw(node, "data")))
            return Req(call) if call is not None else None
        if module in ("urllib.request", "urllib") and name in ("urlopen", "request.urlopen") and args:
            if isinstance(args[0], Req):
                return Resp(args[0].call)
            verb = "POST" if len(args) > 1 or "data" in kwargs else "GET"
            call = self.rest_call(verb, args[0], node.args[0], [])
            return Resp(call) if call is not None else None
        return None

    def http(self, client: Client, verb: str, node: ast.Call, args: list[Value], kwargs: dict[str, Value]) -> Value:
        if verb == "request":
            method_value = args[0] if args else kwargs.get("method")
            method = (_literal_text(node.args[0]) if node.args else None) or (
                template(method_value) if isinstance(method_value, Url) and "{}" not in template(method_value)
                else "GET")
            target, written = (args[1], node.args[1]) if len(node.args) > 1 else (kwargs.get("url"), _kw(node, "url"))
        else:
            method = verb.upper()
            target, written = (args[0], node.args[0]) if node.args else (kwargs.get("url"), _kw(node, "url"))
        if written is None:
            return None
        text = template(target)
        base = client.base
        if base is None or "://" in text or text.startswith("$"):
            full = target
        else:
            between = () if text.startswith("/") else (url("/"),)
            full = join(_strip_slash(base), *between, target)
        params: list[Param] = []
        for key in ("params", "data", "json"):
            params.extend(self.dict_params(kwargs.get(key), _kw(node, key)))
        call = self.rest_call(method.upper(), full, written, params)
        return Resp(call) if call is not None else None

    def manager_call(self, mgr: Mgr, name: str, node: ast.Call, args: list[Value]) -> Value:
        span = self.name_span(node.func, name)
        key = literal(node.args[0]) if node.args else None
        item = pg.item_path(mgr, key)
        if name == "get":
            rest = RestCall("GET", item, span)
        elif name == "list":
            rest = RestCall("GET", mgr.base, span)
        elif name == "create":
            rest = RestCall("POST", mgr.base, span, self.dict_params(args[0] if args else None, _arg(node, 0)))
        elif name == "update":
            rest = RestCall("PUT", item, span, self.dict_params(args[1] if len(args) > 1 else None, _arg(node, 1)))
        elif name == "delete":
            rest = RestCall("DELETE", item, span)
        elif (action := pg.manager_action(mgr, name)) is not None:
            rest = RestCall(action[0], action[1], span)
        else:
            return None
        rest.params.extend(self.keyword_params(node))
        rest = self.emit(rest)
        if name in ("list", "all"):
            return Many(Obj(mgr.kind, pg.item_path(mgr, None), rest))
        return Obj(mgr.kind, item, rest) if name in ("get", "create") else Data(rest)

    def keyword_fields(self, node: ast.Call) -> Iterator[Param]:
        """Each keyword of a call (`**spread` aside) as a field at its name, with its literal value."""
        for k in node.keywords:
            if k.arg is not None:
                line, col = self.src.start(k)
                yield Param(k.arg, (line, col, line, col + len(k.arg)), literal(k.value))

    def keyword_params(self, node: ast.Call) -> list[Param]:
        """Query parameters given as keywords; `get_all=True` and friends page with offsets (`page`)."""
        out: list[Param] = []
        keyset = any(k.arg == "pagination" and literal(k.value) == "keyset" for k in node.keywords)
        for field in self.keyword_fields(node):
            if field.name not in pg.CLIENT_KWARGS:
                out.append(field)
            elif (field.name == "page" or (field.name in pg.OFFSET_PAGING and field.value is True)) and not keyset:
                out.append(Param("page", field.span, field.value))
        return out

    def object_call(self, obj: Obj, name: str, node: ast.Call, args: list[Value], kwargs: dict[str, Value]) -> Value:
        if obj.kind == "Gitlab" and name in pg.RAW_CALLS and node.args:
            path = template(args[0])
            if not path.startswith("/"):
                return None
            params: list[Param] = []
            for key in ("query_data", "post_data"):
                params.extend(self.dict_params(kwargs.get(key), _kw(node, key)))
            rest = self.emit(RestCall(pg.RAW_CALLS[name], path.split("?", 1)[0], self.path_span(node.args[0], path),
                                      params))
            return Data(rest)
        if not obj.item:
            return None
        action = pg.object_action(obj, name)
        if action is None:
            return None
        rest = RestCall(action[0], action[1], self.name_span(node.func, name))
        rest.params.extend(self.keyword_params(node))
        return Data(self.emit(rest))

    # helpers ----------------------------------------------------------------------------
    def emit(self, call: RestCall) -> RestCall:
        """The call, once: a call read again (a helper's body for another caller, a method read twice)
        at the same place with the same fields is the one already found."""
        key = (call.method, call.path, call.span, tuple((p.name, p.span) for p in call.params))
        found = self.calls.get(key)
        if found is not None:
            return found
        self.calls[key] = call
        self.uses.append(call)
        return call

    def read(self, call: RestCall, name: str, span: Span) -> ReadRef:
        for k, r in enumerate(call.reads):
            if r.field == name and r.span == span:
                return ReadRef(call, k)
        call.reads.append(Read(name, span))
        return ReadRef(call, len(call.reads) - 1)

    def name_span(self, node: ast.AST, name: str) -> Span:
        line, col = self.src.end(node)
        return (line, col - len(name), line, col)

    def string_span(self, node: ast.AST, text: str) -> Span:
        line, col = self.src.start(node)
        return (line, col + 1, line, col + 1 + len(text))

    def rest_call(self, method: str, target: Value, written: ast.AST, params: list[Param]) -> RestCall | None:
        if not isinstance(target, Url):
            return None
        text = target.template
        parts = api_url(text, () if "/api/v4" in text else API_ENV)
        if parts is None:
            return None
        call = RestCall(method, parts.path, self.place(target, written, parts.path_at, len(parts.path)), params)
        for name, at, value in query_pairs(parts.query):
            call.params.append(Param(name, self.place(target, written, parts.query_at + at, len(name)), value))
        return self.emit(call)

    def place(self, target: Url, written: ast.AST, offset: int, length: int) -> Span:
        """Where the characters [offset, offset + length) of a URL are reported (the module's
        docstring): from its first character written nearest the statement being read — in it, else
        in the outermost function being read for it, and so on, else anywhere — to just after its last
        character written on that line."""
        pieces = target.slice(offset, offset + length)
        start: Pos | None = None
        best = len(self.inlining) + 2
        for piece in pieces:
            rank = self._rank(piece.node) if piece.node is not None else best
            if rank < best and (where := self.char(piece, 0)) is not None:
                start, best = where, rank
        if start is None:
            line, col = self.src.start(written)
            return (line, col, line, col + 1)
        for piece in reversed(pieces):
            end = self.char(piece, len(piece.text) - 1) if piece.node is not None and piece.text else None
            if end is not None and end[0] == start[0] and end[1] >= start[1]:
                return (start[0], start[1], start[0], end[1] + 1)
        return (start[0], start[1], start[0], start[1] + 1)

    def _rank(self, node: ast.AST) -> int:
        """0 for a node in the statement being read; k for one in the k-th function being read for it
        (outermost first); one more than that for one anywhere else."""
        line = getattr(node, "lineno", 0)
        for k in range(len(self.inlining), 0, -1):
            fn = self.inlining[k - 1]
            if getattr(fn, "lineno", 0) <= line <= (getattr(fn, "end_lineno", 0) or 0):
                return k
        return 0 if self.site[0] <= line <= self.site[1] else len(self.inlining) + 1

    def char(self, piece: Part, k: int) -> Pos | None:
        """The position of a piece's `k`-th character, where the literal can be read back exactly."""
        node = piece.node
        positions: tuple[Pos, ...] | None
        if isinstance(node, ast.Constant):
            if id(node) not in self.literals:
                self.literals[id(node)] = self.src.string_positions(node)
            positions = self.literals[id(node)]
        elif isinstance(node, ast.JoinedStr):
            if id(node) not in self.fstrings:
                self.fstrings[id(node)] = self.src.fstring_positions(node)
            positions = self.fstrings[id(node)]
        else:
            return None
        if positions and piece.offset + k < len(positions):
            return positions[piece.offset + k]
        return self.src.start(node) if k == 0 else None

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
        """The fields of a dict sent as a request's query, form or JSON: its literal string keys,
        where the dict is written, then the keys set on it since."""
        if isinstance(v, Keywords):
            return list(v.fields)  # a helper's `**params` sent as the query, form or JSON
        d = v.node if isinstance(v, DictLit) else node if isinstance(node, ast.Dict) else None
        out: list[Param] = []
        if d is not None:
            out.extend(Param(k.value, self.string_span(k, k.value), literal(val))
                       for k, val in zip(d.keys, d.values, strict=True)
                       if isinstance(k, ast.Constant) and isinstance(k.value, str))
        if isinstance(v, DictLit):
            out.extend(v.added)
        return out


def _is_class(v: Value) -> bool:
    """`v` is a class of the file itself, not one of its instances."""
    return isinstance(v, ClassRef) and not v.instance


def _kw(node: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in node.keywords if k.arg == name), None)


def _arg(node: ast.Call, i: int) -> ast.expr | None:
    return node.args[i] if len(node.args) > i else None


def _literal_text(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _strip_slash(v: Url) -> Url:
    if v.parts and v.parts[-1].text.endswith("/"):
        last = v.parts[-1]
        return Url((*v.parts[:-1], replace(last, text=last.text[:-1])))
    return v


def _lstrip_slash(v: Value) -> Value:
    if isinstance(v, Url) and v.parts and v.parts[0].text.startswith("/"):
        first = v.parts[0]
        return Url((replace(first, text=first.text[1:], offset=first.offset + 1), *v.parts[1:]))
    return v


def _string_method(recv: Url, name: str, args: list[Value]) -> Value:
    """`.format(…)`, `.rstrip("/")`, `.strip()`, `"/".join(…)` on a string as far as it is known."""
    if name == "format":
        return _fill(recv, _FORMAT_FIELD, list(args), lambda m: m.group() in ("{{", "}}"))
    if name in ("rstrip", "strip") and (not args or template(args[0]) == "/"):
        return _strip_slash(recv)
    if name == "lstrip" and (not args or template(args[0]) == "/"):
        return _lstrip_slash(recv)
    if name == "join" and args and isinstance(args[0], (Many, Tup)):
        items = args[0].items if isinstance(args[0], Tup) else (args[0].item,)
        out: list[Value] = []
        for k, item in enumerate(items):
            if k:
                out.append(recv)
            out.append(item)
        return join(*out)
    if name in ("lower", "upper", "replace", "removesuffix", "removeprefix"):
        return None
    return None


def _fill(recv: Url, fields: re.Pattern[str], args: list[Value], escape: object) -> Url:
    """A format string with its fields replaced by the arguments, in order."""
    text = recv.template
    parts: list[Part] = []
    last = 0
    given = iter(args)
    for m in fields.finditer(text):
        parts.extend(recv.slice(last, m.start()))
        if callable(escape) and escape(m):
            parts.extend(recv.slice(m.start(), m.start() + 1))
        else:
            value = next(given, None)
            parts.extend(value.parts if isinstance(value, Url) else (UNKNOWN_PART,))
        last = m.end()
    parts.extend(recv.slice(last, len(text)))
    return Url(tuple(parts))


def _percent(recv: Url, right: Value) -> Url:
    args: list[Value] = list(right.items) if isinstance(right, Tup) else [right]
    return _fill(recv, _PERCENT_FIELD, args, lambda m: m.group() == "%%")


def _urljoin(base: Value, ref: Value) -> Value:
    """`urljoin(base, ref)`: a relative reference replaces what follows the base's last `/`."""
    if not isinstance(base, Url):
        return None
    text = template(ref)
    if "://" in text:
        return ref
    if text.startswith("/"):
        head = base.template
        scheme = head.find("://")
        cut = head.find("/", scheme + 3) if scheme >= 0 else -1
        return join(Url(base.slice(0, cut)), ref) if cut >= 0 else join(base, ref)
    cut = base.template.rfind("/")
    return join(Url(base.slice(0, cut + 1)), ref) if cut >= 0 else join(base, url("/"), ref)


def _urlencode(v: Value) -> Url | None:
    """`urlencode({...})` of a dict display: `k=v&…` with each key where it is written; a value that is
    not a literal is unknown (`{}`)."""
    if not isinstance(v, DictLit) or v.node is None:
        return None
    parts: list[Part] = []
    for k, value in zip(v.node.keys, v.node.values, strict=True):
        if not (isinstance(k, ast.Constant) and isinstance(k.value, str)):
            continue
        if parts:
            parts.append(Part("&"))
        given = literal(value)
        parts.extend((Part(k.value, k), Part("="), Part(str(given)) if isinstance(given, (str, int)) else UNKNOWN_PART))
    return Url(tuple(parts))


def _slash_join(args: Sequence[Value]) -> Value:
    out: list[Value] = []
    for k, a in enumerate(args):
        if k:
            out.append(url("/"))
        out.append(_lstrip_slash(a) if k else a)
    return join(*out) if out else None


def extract(text: str) -> list[Use]:
    """Every REST call and GraphQL document in a Python file that parses."""
    if not PREFILTER.search(text):
        return []
    module = parse_module(text)  # nested at most MAX_DEPTH: the walk below recurses per level
    ex = Extractor(text)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, (INLINE_DEPTH + 1) * (10 * MAX_DEPTH + 500)))
    try:
        return ex.run(module)
    finally:
        sys.setrecursionlimit(limit)


def _key_paths(node: ast.Dict, prefix: str = "") -> Iterator[str]:
    """`a`, `a.b`, … for the literal string keys of a dict display, nested displays included."""
    for k, v in zip(node.keys, node.values, strict=True):
        if isinstance(k, ast.Constant) and isinstance(k.value, str):
            yield prefix + k.value
            if isinstance(v, ast.Dict):
                yield from _key_paths(v, prefix + k.value + ".")
