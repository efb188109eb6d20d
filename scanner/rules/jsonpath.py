"""`jsonpath`: a key or value at a JSONPath in any tree-shaped document (CI YAML, settings).

The JSONPath is compiled once (`scanner.rules.jsonpaths`); a document is only searched when it
holds every literal key the path names. `within` narrows a policy to documents where another
JSONPath (and value) finds something too: `postgres:12` only in a compose file that runs GitLab.
`condition` names what the file alone cannot show; such a finding says "If …" and is a warning.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from jsonpath_ng.jsonpath import Child, Fields, Index, JSONPath

from scanner.core.document import Document, Part
from scanner.core.results import Route
from scanner.rules import spec
from scanner.rules.hits import Hit
from scanner.rules.jsonpaths import compile_path
from scanner.rules.policy import Policy

if TYPE_CHECKING:
    from scanner.rules import schema


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


@dataclass(frozen=True, slots=True)
class Within:
    expression: JSONPath
    required_keys: frozenset[str]
    value: spec.ValueTest | None

    def holds(self, doc: Document) -> bool:
        return any(self.value is None or _accepts(self.value, found)
                   for _, found in matches(doc, self.expression, self.required_keys))


def _accepts(test: spec.ValueTest, value: Any) -> bool:
    return any(test.accepts(v) for v in value) if isinstance(value, list) else test.accepts(value)


def compile(s: schema.JsonPathSpec, build: spec.Build) -> JsonPathMatcher:
    expr, keys = compile_path(s.path)
    within = tuple(Within(*compile_path(w.path), spec.value_test(w.value)) for w in s.within)
    return JsonPathMatcher(expr, s.path, keys, spec.value_test(s.value), spec.value_test(s.key), within,
                           s.condition or "")


def matches(doc: Document, expression: JSONPath, keys: frozenset[str]) -> Iterator[tuple[Route, Any]]:
    """Each place the expression finds, as a route and the value there."""
    if not keys <= doc.data.keys:
        return
    for n, root in enumerate(doc.data.roots):
        for match in expression.find(root):
            yield (n,) + route_of(match.full_path), match.value


def route_of(path: Any) -> tuple[Any, ...]:
    if isinstance(path, Child):
        return route_of(path.left) + route_of(path.right)
    if isinstance(path, Fields):
        return tuple(path.fields)
    if isinstance(path, Index):
        return tuple(path.indices[:1])
    return ()


@dataclass(frozen=True, slots=True)
class Group:
    """Policies that read the same JSONPath: it is run once per document for all of them."""

    expression: JSONPath
    required_keys: frozenset[str]
    tests: tuple[tuple[Policy, spec.ValueTest | None, spec.ValueTest | None, tuple[Within, ...], str], ...]


def grouped(entries: Iterable[tuple[Policy, JsonPathMatcher]]) -> list[Group]:
    by_text: dict[str, list[tuple[Policy, JsonPathMatcher]]] = {}
    for policy, m in entries:
        by_text.setdefault(m.text, []).append((policy, m))
    return [Group(same[0][1].expression, same[0][1].required_keys,
                  tuple((p, m.value, m.key, m.within, m.condition) for p, m in same))
            for same in by_text.values()]


def evaluate(groups: Iterable[Group], doc: Document) -> Iterator[Hit]:
    for group in groups:
        held: dict[int, bool] = {}  # per `within` (by identity: JSONPath objects are not hashable)
        for route, value in matches(doc, group.expression, group.required_keys):
            for policy, test, key, within, condition in group.tests:
                if key is not None and not key.accepts(route[-1]):
                    continue
                if within and id(within) not in held:
                    held[id(within)] = any(w.holds(doc) for w in within)
                if within and not held[id(within)]:
                    continue
                yield from _tested(policy, test, route, value, condition)


def _tested(
    policy: Policy, test: spec.ValueTest | None, route: Route, value: Any, condition: str = ""
) -> Iterator[Hit]:
    if test is not None and isinstance(value, list):
        # a value test on a list (`extends: [.a, .b]`) is a test on each item
        for i, item in enumerate(value):
            if test.accepts(item):
                yield Hit(policy, route + (i,), "value", str(item), condition=condition)
        return
    if test is not None and not test.accepts(value):
        return
    part: Part = "key" if isinstance(route[-1], str) else "value"
    yield Hit(policy, route, part, str(route[-1]), condition=condition)
