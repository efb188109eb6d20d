"""What a Python name or expression holds, as far as API calls are concerned.

The Python extractor follows values through assignments, loops, comprehensions, containers,
function calls (a helper's body is read again with the caller's arguments), classes and their
instances: a URL as far as it is known (its characters and where each is written), the
`requests`/`httpx`/`urllib` modules and their clients, a response and its JSON, a python-gitlab
connection, manager, object or list of objects, the user's own functions, classes and instances.
Anything else is `None`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from scanner.readers.api.model import UNKNOWN, Param, Read, RestCall


@dataclass(frozen=True, slots=True)
class Part:
    """A piece of a URL: its text and where it is written — the string literal (`ast.Constant`, or
    the `ast.JoinedStr` whose literal characters it is) and the offset of its first character in
    that literal's characters; `node` None for a value the source does not spell out (`{}`)."""

    text: str
    node: ast.AST | None = None
    offset: int = 0


UNKNOWN_PART = Part("{}")


@dataclass(frozen=True, slots=True)
class Url:
    parts: tuple[Part, ...]

    @property
    def template(self) -> str:
        """The string as far as it is known; unknown pieces are `{}`."""
        return "".join(p.text for p in self.parts)

    def slice(self, start: int, end: int) -> tuple[Part, ...]:
        """The parts of the characters [start, end) of the template."""
        out: list[Part] = []
        at = 0
        for p in self.parts:
            lo, hi = max(start, at), min(end, at + len(p.text))
            if lo < hi:
                out.append(Part(p.text[lo - at : hi - at], p.node, p.offset + lo - at))
            at += len(p.text)
        return tuple(out)


def url(text: str, node: ast.AST | None = None, offset: int = 0) -> Url:
    return Url((Part(text, node, offset),))


def join(*values: Value) -> Url:
    """The concatenation of values as text (a value that is not a URL is unknown text)."""
    parts: list[Part] = []
    for v in values:
        parts.extend(v.parts if isinstance(v, Url) else (UNKNOWN_PART,))
    return Url(tuple(parts))


@dataclass(frozen=True, slots=True)
class Module:
    name: str  # requests | httpx | gitlab | os | urllib | urllib.request | urllib.parse | http.client | …


@dataclass(frozen=True, slots=True)
class Env:
    """`os.environ`, or `os.getenv` / `os.environ.get` when `getter`."""

    getter: bool = False


@dataclass(frozen=True, slots=True)
class Client:
    """A requests session, an httpx client, a `BaseUrlSession` or an `http.client` connection, with
    the base URL its paths are relative to."""

    base: Url | None = None


@dataclass(frozen=True, slots=True)
class Resp:
    """A response of a REST call (`requests.get(…)`, `urlopen(…)`): `.json()` is its `Data`."""

    call: RestCall


@dataclass(frozen=True, slots=True)
class Data:
    """The JSON of a response, or one item of a JSON list: its keys are the response's fields."""

    call: RestCall


@dataclass(frozen=True, slots=True)
class Obj:
    """A python-gitlab object (`kind` "Gitlab" is the connection) and the call that fetched it."""

    kind: str  # python-gitlab's class name
    item: str  # its REST path, e.g. /projects/:id/merge_requests/:id
    call: RestCall | None = None


@dataclass(frozen=True, slots=True)
class Mgr:
    kind: str  # the class of the objects it manages
    base: str  # its path
    singleton: bool = False  # `get()` takes no id: the object is the endpoint itself


@dataclass(frozen=True, slots=True)
class Callable_:
    """A name imported from a module (`from gitlab import Gitlab`)."""

    module: str
    name: str


DICT_KEYS = 256  # keys assigned one by one to one dict that are kept, at most


@dataclass(frozen=True, slots=True)
class DictLit:
    """A dict built in the file: a display (`node`) or `dict(k=v)`, the string keys set on it since
    (`payload["k"] = v`, in the order the statements run; at most `DICT_KEYS`) as the request fields
    they become, and what its values hold where the reader knows (`item`)."""

    node: ast.Dict | None
    added: tuple[Param, ...] = ()
    item: Value = None


@dataclass(frozen=True, slots=True)
class ReadRef:
    """The value of a response field just read: `call.reads[index]`."""

    call: RestCall
    index: int

    def compare(self, literals: tuple[str, ...]) -> None:
        r = self.call.reads[self.index]
        self.call.reads[self.index] = Read(r.field, r.span, literals)


@dataclass(frozen=True, slots=True)
class Req:
    """A `urllib.request.Request`: its call is made when it is opened."""

    call: RestCall


@dataclass(eq=False, slots=True)
class ClassInfo:
    """A class of the file: its methods, and the attributes set on it or on its instances (one
    instance stands for all of them)."""

    node: ast.ClassDef
    methods: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = field(default_factory=dict)
    attrs: dict[str, Value] = field(default_factory=dict)
    session: bool = False  # a subclass of a requests session or an httpx client


@dataclass(frozen=True, slots=True)
class Func:
    """A function of the file, or a method bound to an instance (`self`) or a class (`cls`)."""

    node: ast.FunctionDef | ast.AsyncFunctionDef
    bound: ClassRef | None = None


@dataclass(frozen=True, slots=True)
class ClassRef:
    """A class of the file: the class itself (its name, `cls`), whose call makes an instance, or,
    `instance`, one of its instances (`self`, `Client()`; one stands for all of them)."""

    info: ClassInfo
    instance: bool


@dataclass(frozen=True, slots=True)
class Many:
    """A container whose items hold `item` (and whose keys hold `key`): a list, a dict, `.items()`,
    python-gitlab's list of objects (`Many(Obj(…))`)."""

    item: Value
    key: Value = None


@dataclass(frozen=True, slots=True)
class Keywords:
    """A function's `**kwargs` as its caller filled it: what each keyword given holds, and each as a
    request field written where the caller wrote it (`get("users", page=2)` sends `page` when the
    helper passes its `**params` on as `params=params`)."""

    given: tuple[tuple[str, Value], ...]
    fields: tuple[Param, ...] = ()


@dataclass(frozen=True, slots=True)
class Tup:
    """A tuple, list or set display: what each of its items holds."""

    items: tuple[Value, ...]


Value = (Url | Module | Env | Client | Resp | Data | Obj | Mgr | Callable_ | DictLit | ReadRef | Req | Func
         | ClassRef | Many | Keywords | Tup | None)


def element(v: Value) -> Value:
    """What iterating over `v` yields."""
    if isinstance(v, Data):
        return v
    if isinstance(v, (Many, DictLit)):
        return v.item
    if isinstance(v, Tup):  # a list or tuple display: what its items hold, where that is known
        return next((item for item in v.items if item is not None), None)
    return None


def template(v: Value) -> str:
    return v.template if isinstance(v, Url) else "{}"


def literal(node: ast.AST | None) -> object:
    """The Python value of a literal node (for parameter value tests), else a marker."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, bool, int, type(None))):
        return node.value
    return UNKNOWN


def strings(node: ast.AST) -> tuple[str, ...]:
    """String literals of `"x"` or `("x", "y")`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return (node.value,)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return tuple(e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str))
    return ()
