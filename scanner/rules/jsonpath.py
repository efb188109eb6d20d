"""`jsonpath`: a key or value at a JSONPath in any tree-shaped document (CI YAML, settings); and the
policy JSONPath every matcher of a tree shares (`compile_path`, `matches`).

A JSONPath is parsed once when the policy is compiled, limited to what can be evaluated fast, with
the literal keys it needs: a document is only searched when it holds every one of them. `within`
narrows a policy to documents where another JSONPath (and value) finds something too: `postgres:12`
only in a compose file that runs GitLab; `unless` to documents where none of its paths (and values)
finds anything: the chart's PostgreSQL image, unless `postgresql.install: false`. `condition` names
what the file alone cannot show; such a finding says "If …" and is a warning.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from jsonpath_ng.jsonpath import (
    Child,
    Descendants,
    Fields,
    Index,
    JSONPath,
    Root,
    Slice,
    This,
    Where,
    WhereNot,
    Wildcard,
)

from scanner.core.document import Document, Part
from scanner.core.results import Route
from scanner.rules import spec
from scanner.rules.hits import Hit
from scanner.rules.kind import Entries, MatcherKind, Peers
from scanner.rules.policy import Policy

if TYPE_CHECKING:
    from scanner.rules.facets import Facets


class WithinSpec(spec.Spec):
    """A JSONPath (and value) that must find something in the same document for the policy to apply."""

    path: str
    value: spec.ValueSpec | None = None


class Spec(spec.Spec):
    path: str
    value: spec.ValueSpec | None = None
    key: spec.ValueSpec | None = None  # a test on the name of the key matched (`$.*` with a key longer than 255)
    within: tuple[WithinSpec, ...] = ()  # any of them in the document (a compose file that runs GitLab)
    unless: tuple[WithinSpec, ...] = ()  # none of them in the document (`postgresql.install: false`)
    # what the file alone cannot show ("this project runs Dependency Scanning"): the finding says
    # "If …:" and is at most a warning
    condition: str | None = None


@dataclass(frozen=True, slots=True)
class JsonPathMatcher(spec.Matcher):
    kind: ClassVar[str] = "jsonpath"
    expression: JSONPath
    text: str
    required_keys: frozenset[str]
    value: spec.ValueTest | None
    key: spec.ValueTest | None = None  # a test on the matched key's own name (a job name's length)
    within: tuple[Within, ...] = ()
    condition: str = ""
    unless: tuple[Within, ...] = ()


@dataclass(frozen=True, slots=True)
class Within:
    expression: JSONPath
    required_keys: frozenset[str]
    value: spec.ValueTest | None

    def holds(self, doc: Document) -> bool:
        return any(self.value is None or _accepts(self.value, found)
                   for _, found in matches(doc, self.expression, self.required_keys))


def _accepts(test: spec.ValueTest, value: Any) -> bool:
    if isinstance(value, list) and not test.whole:
        return any(test.accepts(v) for v in value)
    return test.accepts(value)


def compile(s: Spec, build: spec.Build) -> JsonPathMatcher:
    expr, keys = compile_path(s.path)
    within, unless = (tuple(Within(*compile_path(w.path), spec.value_test(w.value)) for w in ws)
                      for ws in (s.within, s.unless))
    return JsonPathMatcher(expr, s.path, keys, spec.value_test(s.value), spec.value_test(s.key), within,
                           s.condition or "", unless)


def compile_path(text: str) -> tuple[JSONPath, frozenset[str]]:
    """The expression and the literal keys a document must have for it to match anything.
    (The parser is imported here: a scan whose catalog comes from the cache never needs it.)"""
    from jsonpath_ng.parser import parse as jsonpath_parse

    try:
        expr = jsonpath_parse(text)
    except Exception as exc:  # noqa: BLE001 - jsonpath-ng raises bare Exception (and its lexer/parser errors)
        raise ValueError(f"invalid JSONPath {text!r}: {exc}") from None
    return expr, required_keys(expr)


def required_keys(expr: JSONPath) -> frozenset[str]:
    """Literal field names the expression needs; a document lacking any is skipped.

    Recursive descent is refused: on a document built from aliases it walks the expanded tree, for
    every expression on every file.
    """
    keys: set[str] = set()
    stack: list[JSONPath] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, Descendants):
            raise ValueError("recursive descent ('..') is not allowed in policy JSONPath")
        if isinstance(node, Child):
            stack.extend((node.left, node.right))
        elif isinstance(node, (Where, WhereNot)):
            stack.append(node.left)
        elif isinstance(node, Fields):
            if len(node.fields) == 1:  # `['a','b']` needs one of them, so neither is required
                keys.update(f for f in node.fields if f != "*")
        elif not isinstance(node, (Root, Slice, Index, This, Wildcard)):
            raise ValueError(f"unsupported JSONPath construct {type(node).__name__}")
    return frozenset(keys)


def matches(doc: Document, expression: JSONPath, keys: frozenset[str]) -> Iterator[tuple[Route, Any]]:
    """Each place the expression finds, as a route and the value there, in jsonpath-ng's order."""
    if not keys <= doc.data.keys:
        return
    plan = _plan_of(expression)
    for n, root in enumerate(doc.data.roots):
        yield from _walk(plan, root, [((n,), root)])


# The steps of a plan: jsonpath-ng's nodes, flattened, each evaluated by `_walk` on plain data with
# jsonpath-ng's semantics (tests/test_jsonpath_plan.py checks both agree on random documents and
# paths). jsonpath-ng builds a context object per node visited; this is what a scan spends its time
# on, so the parser's tree is only read once, here.
_ROOT, _FIELDS, _WILD, _INDEX, _SLICE, _WHERE = range(6)
Plan = tuple[tuple[Any, ...], ...]
_PLANS: dict[int, tuple[JSONPath, Plan]] = {}  # by id of the expression, which is kept alive with it


def _plan_of(expression: JSONPath) -> Plan:
    known = _PLANS.get(id(expression))
    if known is None or known[0] is not expression:
        known = _PLANS[id(expression)] = (expression, tuple(_steps(expression)))
    return known[1]


def _steps(node: JSONPath) -> Iterator[tuple[Any, ...]]:
    if isinstance(node, Child):
        yield from _steps(node.left)
        yield from _steps(node.right)
    elif isinstance(node, Where):  # WhereNot too
        yield from _steps(node.left)
        yield (_WHERE, tuple(_steps(node.right)), isinstance(node, WhereNot))
    elif isinstance(node, Root):
        yield (_ROOT,)
    elif isinstance(node, This):
        return
    elif isinstance(node, Fields):
        if node._deprecated_wildcard_use:  # only a hand-built `Fields('*')`, never a parsed one
            yield (_WILD,)
        else:
            yield (_FIELDS, tuple(node.fields))
    elif isinstance(node, Wildcard):
        yield (_WILD,)
    elif isinstance(node, Index):
        yield (_INDEX, tuple(node.indices))
    elif isinstance(node, Slice):
        if node._deprecated_wildcard_use:  # only a hand-built `Slice()`: every member or item
            yield (_WILD,)
        else:
            yield (_SLICE, node.start, node.end, node.step)
    else:
        raise ValueError(f"unsupported JSONPath construct {type(node).__name__}")


def _walk(plan: Plan, root: Any, frontier: list[tuple[Route, Any]]) -> list[tuple[Route, Any]]:
    """What the plan finds from each (route, value) of `frontier`, in order; `root` is what `$` is."""
    for step in plan:
        op = step[0]
        found: list[tuple[Route, Any]] = []
        add = found.append
        if op == _FIELDS:
            for route, value in frontier:
                if isinstance(value, dict):
                    for name in step[1]:
                        if name in value:
                            add((route + (name,), value[name]))
                elif hasattr(value, "get"):
                    found.extend(_looked_up(route, value, step[1]))
        elif op == _WILD:
            for route, value in frontier:
                if isinstance(value, (list, tuple)):
                    found.extend((route + (i,), item) for i, item in enumerate(value))
                elif isinstance(value, dict):
                    found.extend((route + (k,), item) for k, item in value.items())
                elif hasattr(value, "keys"):
                    found.extend(_looked_up(route, value, tuple(value.keys())))
        elif op == _INDEX:
            for route, value in frontier:
                if isinstance(value, (list, tuple)):
                    size = len(value)
                    found.extend((route + (i,), value[i]) for i in step[1] if size and -size <= i < size)
        elif op == _SLICE:
            _, start, end, stride = step
            for route, value in frontier:
                if isinstance(value, (list, tuple)) and stride != 0:
                    found.extend((route + (i,), value[i]) for i in range(len(value))[start:end:stride])
        elif op == _ROOT:
            found = [((route[0],) if route else (), root) for route, _ in frontier]
        else:  # _WHERE: the items for which the sub-plan finds something (or nothing, `wherenot`)
            sub, negate = step[1], step[2]
            found = [(route, value) for route, value in frontier
                     if bool(_walk(sub, root, [(route, value)])) != negate]
        frontier = found
    return frontier


_MISSING = object()


def _looked_up(route: Route, value: Any, names: Iterable[Any]) -> Iterator[tuple[Route, Any]]:
    """jsonpath-ng's field lookup on a mapping that is not a dict: `.get`, nothing on a type error."""
    for name in names:
        try:
            got = value.get(name, _MISSING)
        except (TypeError, AttributeError):
            continue
        if got is not _MISSING:
            yield route + (name,), got


@dataclass(frozen=True, slots=True)
class Group:
    """Policies that read the same JSONPath: it is run once per document for all of them."""

    expression: JSONPath
    required_keys: frozenset[str]
    tests: tuple[tuple[Policy, spec.ValueTest | None, spec.ValueTest | None, tuple[Within, ...], str,
                       tuple[Within, ...]], ...]


def grouped(entries: Entries, peers: Peers) -> list[Group]:
    by_text: dict[str, list[tuple[Policy, JsonPathMatcher]]] = {}
    for policy, m in entries:
        by_text.setdefault(m.text, []).append((policy, m))
    return [Group(same[0][1].expression, same[0][1].required_keys,
                  tuple((p, m.value, m.key, m.within, m.condition, m.unless) for p, m in same))
            for same in by_text.values()]


def evaluate(groups: list[Group], facets: Facets) -> Iterator[Hit]:
    doc = facets.doc
    for group in groups:
        held: dict[int, bool] = {}  # per `within`/`unless` (by identity: JSONPath objects are not hashable)
        for route, value in matches(doc, group.expression, group.required_keys):
            for policy, test, key, within, condition, unless in group.tests:
                if key is not None and not key.accepts(route[-1]):
                    continue
                if not _holds(within, doc, held, True) or _holds(unless, doc, held, False):
                    continue
                yield from _tested(policy, test, route, value, condition)


def _holds(paths: tuple[Within, ...], doc: Document, held: dict[int, bool], empty: bool) -> bool:
    """Whether any of `paths` finds something in `doc` (`empty` when there are none), once per document."""
    if not paths:
        return empty
    if id(paths) not in held:
        held[id(paths)] = any(w.holds(doc) for w in paths)
    return held[id(paths)]


def _tested(
    policy: Policy, test: spec.ValueTest | None, route: Route, value: Any, condition: str = ""
) -> Iterator[Hit]:
    if test is not None and isinstance(value, list) and not test.whole:
        # a value test on a list (`extends: [.a, .b]`) is a test on each item
        for i, item in enumerate(value):
            if test.accepts(item):
                yield Hit(policy, route + (i,), "value", str(item), condition=condition)
        return
    if test is not None and not test.accepts(value):
        return
    part: Part = "key" if isinstance(route[-1], str) else "value"
    yield Hit(policy, route, part, str(route[-1]), condition=condition)


KIND = MatcherKind(Spec, JsonPathMatcher, compile, {"tree": evaluate}, grouped)
