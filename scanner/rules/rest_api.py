"""`rest-api`: calls to REST v4 endpoints (`PUT /runners/:id`) that break in a release or in v5.

Without `parameters` and `response_fields` the call itself is reported, else each named field it
sends (form fields, query parameters, JSON body keys) or reads from its response (jq, Python,
python-gitlab objects). With `unless_parameter`, a call that also sends that parameter (with the
given value, or a value sunset cannot read) is not reported: `updated_after` without
`order_by=updated_at`. Calls come from every reader that extracts them (`scanner.readers.api`):
job scripts, script files, Python, JavaScript/TypeScript, Ruby, Terraform.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from scanner.core.results import Route
from scanner.core.tree import Span
from scanner.readers.api.model import UNKNOWN, RestCall
from scanner.readers.api.paths import Endpoint, compile_endpoint, normalise
from scanner.rules import spec
from scanner.rules.hits import Hit
from scanner.rules.kind import MatcherKind
from scanner.rules.policy import Policy

if TYPE_CHECKING:
    from scanner.rules.facets import Facets, Use

# Words a script must contain to be worth tokenising for API calls (`scanner.rules.evaluate`).
API_WORDS = ("api/v4", "CI_API_V4_URL", "api/graphql", "CI_API_GRAPHQL_URL", "glab", "curl", "wget", "jq",
             "http ", "https ", "xh ")


class UnlessParameterSpec(spec.Spec):
    """The call is not reported when it sends this parameter (with a value the test accepts, or one
    sunset cannot read: a `$VAR` could be the right value)."""

    name: str
    value: spec.ValueSpec | None = None


class Spec(spec.Spec):
    endpoints: tuple[str, ...] = spec.field(min_length=1)
    parameters: tuple[str, ...] = ()  # form fields, query parameters, JSON body keys
    parameter_value: spec.ValueSpec | None = None
    unless_parameter: UnlessParameterSpec | None = None
    response_fields: tuple[str, ...] = ()  # fields read from the call's response (jq, Python)
    response_value: spec.ValueSpec | None = None  # only reads compared with such a value


@dataclass(frozen=True, slots=True)
class RestApiMatcher(spec.Matcher):
    kind: ClassVar[str] = "rest-api"
    endpoints: tuple[Endpoint, ...]
    parameters: frozenset[str]
    parameter_value: spec.ValueTest | None
    response_fields: frozenset[str]
    response_value: spec.ValueTest | None
    unless: tuple[str, spec.ValueTest | None] | None = None

    def script_words(self) -> Iterable[str]:
        return API_WORDS


def compile(s: Spec, build: spec.Build) -> RestApiMatcher:
    return RestApiMatcher(
        tuple(compile_endpoint(e) for e in s.endpoints),
        frozenset(s.parameters),
        spec.value_test(s.parameter_value),
        frozenset(s.response_fields),
        spec.value_test(s.response_value),
        (s.unless_parameter.name, spec.value_test(s.unless_parameter.value)) if s.unless_parameter else None,
    )


Entries = list[tuple[Policy, RestApiMatcher]]


def evaluate(entries: Entries, uses: Iterable[tuple[Route, Use]]) -> Iterator[Hit]:
    for route, use in uses:
        if isinstance(use, RestCall):
            path = normalise(use.path)  # once per call, not once per endpoint of every policy
            for policy, m in entries:
                for matched, span in hits(m, use, path):
                    yield Hit(policy, route, "value", matched, span)


def in_scripts(entries: Entries, facets: Facets) -> Iterator[Hit]:
    return evaluate(entries, facets.script_calls)


def in_source(entries: Entries, facets: Facets) -> Iterator[Hit]:
    return evaluate(entries, facets.calls)


def hits(m: RestApiMatcher, call: RestCall, path: str | None = None) -> Iterator[tuple[str, Span]]:
    """What of `call` the matcher reports; `path`: the call's path normalised, when the caller has it."""
    path = normalise(call.path) if path is None else path
    if not any(e.matches_normalised(call.method, path) for e in m.endpoints):
        return
    if m.unless is not None and _sends(call, *m.unless):
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


def _sends(call: RestCall, name: str, test: spec.ValueTest | None) -> bool:
    """Whether the call sends `name` with a value `test` accepts or one only known at run time (not
    read, or a shell `$VARIABLE` in a URL or form field)."""
    return any(p.name == name and (test is None or _unread(p.value) or test.accepts(p.value)) for p in call.params)


def _unread(value: object) -> bool:
    return value is UNKNOWN or (isinstance(value, str) and "$" in value)


# Terraform's resources stand for a few calls: policies name it in `applies_to` (`scanner.rules.documents`).
KIND = MatcherKind(Spec, RestApiMatcher, compile,
                   {"script-calls": in_scripts, "rest-calls": in_source, "terraform-resources": in_source},
                   applies=("script-calls", "rest-calls"))
