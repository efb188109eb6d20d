"""`unique-values`: lists of mappings in which one key's value must not repeat — two Gitaly storages
with the same `path` in `gitaly['configuration']`. The second and later items holding a value are
reported, at that value."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from jsonpath_ng.jsonpath import JSONPath

from scanner.rules import spec
from scanner.rules.hits import Hit
from scanner.rules.jsonpath import compile_path, matches
from scanner.rules.kind import MatcherKind
from scanner.rules.policy import Policy

if TYPE_CHECKING:
    from scanner.rules.facets import Facets


class Spec(spec.Spec):
    path: str  # JSONPath of lists of mappings (`$.gitaly.configuration.storage`)
    key: str  # the item key whose value must not repeat within one list (`path`)


@dataclass(frozen=True, slots=True)
class UniqueValuesMatcher(spec.Matcher):
    kind: ClassVar[str] = "unique-values"
    expression: JSONPath
    required_keys: frozenset[str]
    key: str


def compile(s: Spec, build: spec.Build) -> UniqueValuesMatcher:
    expr, keys = compile_path(s.path)
    return UniqueValuesMatcher(expr, keys, s.key)


def evaluate(entries: list[tuple[Policy, UniqueValuesMatcher]], facets: Facets) -> Iterator[Hit]:
    doc = facets.doc
    for policy, m in entries:
        for route, items in matches(doc, m.expression, m.required_keys):
            seen: set[Any] = set()
            for i, item in enumerate(items if isinstance(items, list) else ()):
                value = item.get(m.key) if isinstance(item, dict) else None
                if value is None or isinstance(value, (dict, list)):
                    continue
                if value in seen:
                    yield Hit(policy, route + (i, m.key), "value", str(value))
                seen.add(value)


# A settings matcher: it reads any tree, and applies by default to settings files.
KIND = MatcherKind(Spec, UniqueValuesMatcher, compile, {"tree": evaluate}, applies=("settings-tree",))
