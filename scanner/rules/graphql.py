"""`graphql`: GraphQL fields and arguments that go away, selected by name where the selection's type
is known from `on` (the operation root, a fragment's type condition) or from the parent path
(`under: [runners.nodes]`); argument values that go away (`values: [STORAGE]` with
`arguments: [sort]`: an enum value, a string, or an item of a list written for that argument);
and input types that go away (`variable_types: [RunnerMembershipFilter]`, where a `$variable` is
declared with it). Documents come from `.graphql` files and from strings in scripts and source code;
`$variables` sent with a query count as its arguments.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from scanner.core.results import Route
from scanner.readers.api.model import GraphqlText
from scanner.rules import spec
from scanner.rules.hits import Hit
from scanner.rules.kind import MatcherKind
from scanner.rules.policy import Policy
from scanner.rules.rest_api import API_WORDS

if TYPE_CHECKING:
    from scanner.readers.api.model import GqlField
    from scanner.rules.facets import Facets, Use


class RuleSpec(spec.Spec):
    fields: tuple[str, ...] = ()
    on: tuple[str, ...] = ()
    under: tuple[str, ...] = ()
    arguments: tuple[str, ...] = ()  # report these arguments (`active`, `input.direction`)
    values: tuple[str, ...] = ()  # only where the argument's value (enum, string, list item) is one of these
    without_argument: str | None = None  # report the field when this argument is absent
    variable_types: tuple[str, ...] = ()  # report `$var: Type` declarations of these named types

    def check(self) -> None:
        if bool(self.fields) == bool(self.variable_types):
            raise ValueError("give `fields` or `variable_types`, not both or neither")
        if self.values and not self.arguments:
            raise ValueError("`values` needs `arguments`")


class Spec(spec.Spec):
    rules: tuple[RuleSpec, ...] = spec.field(min_length=1)


@dataclass(frozen=True, slots=True)
class GraphqlRule:
    fields: frozenset[str]
    on: frozenset[str]
    under: tuple[tuple[str, ...], ...]
    arguments: frozenset[str]
    without_argument: str | None
    values: frozenset[str] = frozenset()
    variable_types: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class GraphqlMatcher(spec.Matcher):
    kind: ClassVar[str] = "graphql"
    rules: tuple[GraphqlRule, ...]

    def script_words(self) -> Iterable[str]:
        return API_WORDS


def compile(s: Spec, build: spec.Build) -> GraphqlMatcher:
    return GraphqlMatcher(tuple(_rule(r) for r in s.rules))


def _rule(s: RuleSpec) -> GraphqlRule:
    under = tuple(tuple(u.split(".")) for u in s.under)
    return GraphqlRule(frozenset(s.fields), frozenset(s.on), under, frozenset(s.arguments), s.without_argument,
                       frozenset(s.values), frozenset(s.variable_types))


Entries = list[tuple[Policy, GraphqlMatcher]]


def evaluate(entries: Entries, uses: Iterable[tuple[Route, Use]]) -> Iterator[Hit]:
    """Text that is not GraphQL has nothing to report (a `.graphql` file's syntax was checked when it
    was parsed)."""
    for route, use in uses:
        if not isinstance(use, GraphqlText):
            continue
        from scanner.readers.api import graphql as gql  # graphql-core is imported only for GraphQL text

        fields, types = gql.read(use.text, False, use.variables)
        for policy, gm in entries:
            for rule in gm.rules:
                for name, offset in types:
                    if name in rule.variable_types:
                        yield Hit(policy, route, "value", name, use.span(offset, len(name)))
                for f in fields:
                    for matched, offset, length in rule_hits(rule, f):
                        yield Hit(policy, route, "value", matched, use.span(offset, length))


def in_scripts(entries: Entries, facets: Facets) -> Iterator[Hit]:
    return evaluate(entries, facets.script_calls)


def in_source(entries: Entries, facets: Facets) -> Iterator[Hit]:
    return evaluate(entries, facets.calls)


def rule_hits(rule: GraphqlRule, f: GqlField) -> Iterator[tuple[str, int, int]]:
    """What `rule` reports in the field `f`: the matched text, its offset and its length."""
    if f.name not in rule.fields:
        return
    if (rule.on or rule.under) and not (f.on in rule.on or any(f.parents[-len(u) :] == u for u in rule.under)):
        return
    if rule.values:
        for path, value, offset in f.values:
            if path in rule.arguments and value in rule.values:
                yield value, offset, len(value)
    elif rule.arguments:
        for path, offset in f.arguments:
            if path in rule.arguments:
                yield path, offset, len(path.rsplit(".", 1)[-1])
    elif rule.without_argument is not None:
        if all(path.split(".", 1)[0] != rule.without_argument for path, _ in f.arguments):
            yield f.name, f.offset, len(f.name)
    else:
        yield f.name, f.offset, len(f.name)


KIND = MatcherKind(Spec, GraphqlMatcher, compile, {"script-calls": in_scripts, "graphql-documents": in_source})
