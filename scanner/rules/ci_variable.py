"""`ci-variable`: a CI/CD variable GitLab stopped reading, set in a `variables:` block (or, in
settings files, anywhere the file sets environment variables), optionally only with some values."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from scanner.readers import ci
from scanner.rules import spec
from scanner.rules.hits import Hit
from scanner.rules.kind import Entries, MatcherKind, Peers
from scanner.rules.policy import Policy

if TYPE_CHECKING:
    from scanner.rules.facets import Facets


class Spec(spec.Spec):
    names: tuple[str, ...] = spec.field(min_length=1)
    value: spec.ValueSpec | None = None


@dataclass(frozen=True, slots=True)
class CiVariableMatcher(spec.Matcher):
    kind: ClassVar[str] = "ci-variable"
    names: frozenset[str]
    value: spec.ValueTest | None = None


def compile(s: Spec, build: spec.Build) -> CiVariableMatcher:
    return CiVariableMatcher(frozenset(spec.checked_names(s.names)), spec.value_test(s.value))


Lookup = dict[str, list[tuple[Policy, CiVariableMatcher]]]


def by_name(entries: Entries, peers: Peers) -> Lookup:
    found: Lookup = defaultdict(list)
    for policy, m in entries:
        for name in m.names:
            found[name].append((policy, m))
    return found


def accepts(m: CiVariableMatcher, value: object) -> bool:
    return m.value is None or m.value.accepts(value)


def in_variable_blocks(variables: Lookup, facets: Facets) -> Iterator[Hit]:
    """Variables set in the CI file's `variables:` blocks (global and per job)."""
    for route, block in ci.variable_blocks(facets.doc):
        for name, value in block.items():
            for policy, m in variables.get(name, ()):
                if accepts(m, ci.variable_value(value)):
                    yield Hit(policy, route + (name,), "key", name)


def in_settings_env(variables: Lookup, facets: Facets) -> Iterator[Hit]:
    """Variables a settings file sets in the environment (env files, `ENV`, containers' `env:`)."""
    for var in facets.env:
        for policy, m in variables.get(var.name, ()):
            if accepts(m, var.value):
                yield Hit(policy, var.route, var.part, var.name, var.span)


KIND = MatcherKind(Spec, CiVariableMatcher, compile,
                   {"ci-variables": in_variable_blocks, "settings-env": in_settings_env}, by_name)
