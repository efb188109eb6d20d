"""API policies of one document kind, and their evaluation on extracted calls and documents."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from scanner.core.tree import Span
from scanner.readers.api.model import GqlField, GraphqlText, RestCall
from scanner.rules.matchers import GraphqlMatcher, GraphqlRule, RestApiMatcher
from scanner.rules.policy import Policy

# Words a script must contain to be worth tokenising for API calls (see `PolicyIndex.prefilter`).
API_WORDS = ("api/v4", "CI_API_V4_URL", "api/graphql", "CI_API_GRAPHQL_URL", "glab", "curl", "wget", "jq",
             "http ", "https ", "xh ")


@dataclass(frozen=True, slots=True)
class ApiHit:
    policy: Policy
    matched: str
    span: Span


class ApiIndex:
    def __init__(self) -> None:
        self.rest: list[tuple[Policy, RestApiMatcher]] = []
        self.graphql: list[tuple[Policy, GraphqlMatcher]] = []

    def add(self, policy: Policy, matcher: RestApiMatcher | GraphqlMatcher) -> None:
        if isinstance(matcher, RestApiMatcher):
            self.rest.append((policy, matcher))
        else:
            self.graphql.append((policy, matcher))

    def __bool__(self) -> bool:
        return bool(self.rest or self.graphql)

    def hits(self, use: RestCall | GraphqlText, strict: bool = False) -> Iterator[ApiHit]:
        """Findings for one call or one GraphQL document. `strict`: the text is a GraphQL
        document file, so a syntax error is raised instead of meaning "not GraphQL"."""
        if isinstance(use, RestCall):
            for policy, m in self.rest:
                for matched, span in rest_hits(m, use):
                    yield ApiHit(policy, matched, span)
        elif self.graphql:
            from scanner.readers.api import gql  # graphql-core is imported only for GraphQL text

            fields = gql.selected_fields(use.text, strict, use.variables)
            for policy, gm in self.graphql:
                for rule in gm.rules:
                    for f in fields:
                        for matched, offset in rule_hits(rule, f):
                            yield ApiHit(policy, matched, use.span(offset, len(matched.rsplit(".", 1)[-1])))


def rest_hits(m: RestApiMatcher, call: RestCall) -> Iterator[tuple[str, Span]]:
    if not any(e.matches(call.method, call.path) for e in m.endpoints):
        return
    if not m.parameters and not m.response_fields:
        yield f"{call.method} {call.path}", call.span
        return
    for p in call.params:
        if p.name in m.parameters and (m.parameter_value is None or m.parameter_value.accepts(p.value)):
            yield p.name, p.span
    for r in call.reads:
        test = m.response_value
        if r.field in m.response_fields and (test is None or any(map(test.accepts, r.compared))):
            yield r.field, r.span


def rule_hits(rule: GraphqlRule, f: GqlField) -> Iterator[tuple[str, int]]:
    if f.name not in rule.fields:
        return
    if (rule.on or rule.under) and not (f.on in rule.on or any(f.parents[-len(u) :] == u for u in rule.under)):
        return
    if rule.arguments:
        for path, offset in f.arguments:
            if path in rule.arguments:
                yield path, offset
    elif rule.without_argument is not None:
        if all(path.split(".", 1)[0] != rule.without_argument for path, _ in f.arguments):
            yield f.name, f.offset
    else:
        yield f.name, f.offset
