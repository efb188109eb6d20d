"""What a Python name or expression holds, as far as API calls are concerned.

The Python extractor follows values through assignments, loops and comprehensions in the
order statements are written (per function, starting from the module's names): a URL
template, the `requests`/`httpx` modules and their clients, a response and its JSON, a
python-gitlab connection, manager, object or list of objects. Anything else is `None`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from scanner.readers.api.model import Read, RestCall


@dataclass(frozen=True, slots=True)
class Url:
    template: str  # the string as far as it is known; unknown parts are `{}`
    node: ast.AST | None = field(default=None, compare=False)  # where the literal is written


@dataclass(frozen=True, slots=True)
class Module:
    name: str  # requests | httpx | gitlab | os


@dataclass(frozen=True, slots=True)
class Env:
    """`os.environ`, or `os.getenv` / `os.environ.get` when `getter`."""

    getter: bool = False


@dataclass(frozen=True, slots=True)
class Client:
    """A requests session or an httpx client, with its `base_url`."""

    base: str = ""


@dataclass(frozen=True, slots=True)
class Resp:
    call: RestCall


@dataclass(frozen=True, slots=True)
class Data:
    """The JSON of a response, or one item of a JSON list: its keys are the response's fields."""

    call: RestCall


@dataclass(frozen=True, slots=True)
class Obj:
    """A python-gitlab object (`kind` "gitlab" is the connection) and the call that fetched it."""

    kind: str
    item: str  # its REST path, e.g. /projects/:id/merge_requests/:id
    call: RestCall | None = None


@dataclass(frozen=True, slots=True)
class Objs:
    kind: str
    item: str
    call: RestCall


@dataclass(frozen=True, slots=True)
class Mgr:
    kind: str  # the kind of object it manages
    base: str  # its list path


@dataclass(frozen=True, slots=True)
class Callable_:
    """A name imported from a module (`from gitlab import Gitlab`)."""

    module: str
    name: str


@dataclass(frozen=True, slots=True)
class DictLit:
    node: ast.Dict


@dataclass(frozen=True, slots=True)
class ReadRef:
    """The value of a response field just read: `call.reads[index]`."""

    call: RestCall
    index: int

    def compare(self, literals: tuple[str, ...]) -> None:
        r = self.call.reads[self.index]
        self.call.reads[self.index] = Read(r.field, r.span, literals)


Value = Url | Module | Env | Client | Resp | Data | Obj | Objs | Mgr | Callable_ | DictLit | ReadRef | None


def element(v: Value) -> Value:
    """What iterating over `v` yields."""
    if isinstance(v, Data):
        return v
    if isinstance(v, Objs):
        return Obj(v.kind, v.item, v.call)
    return None


def template(v: Value) -> str:
    return v.template if isinstance(v, Url) else "{}"


def literal(node: ast.AST | None) -> object:
    """The Python value of a literal node (for parameter value tests), else a marker."""
    from scanner.readers.api.model import UNKNOWN

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
