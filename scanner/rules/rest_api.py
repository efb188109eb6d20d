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

from scanner.core.tree import Span
from scanner.readers.api.model import UNKNOWN
from scanner.readers.api.paths import Endpoint, compile_endpoint
from scanner.rules import spec
from scanner.rules.policy import Policy

if TYPE_CHECKING:
    from scanner.readers.api.model import RestCall
    from scanner.rules import schema

# Words a script must contain to be worth tokenising for API calls (`scanner.rules.index`).
API_WORDS = ("api/v4", "CI_API_V4_URL", "api/graphql", "CI_API_GRAPHQL_URL", "glab", "curl", "wget", "jq",
             "http ", "https ", "xh ")


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


def compile(s: schema.RestApiSpec, build: spec.Build) -> RestApiMatcher:
    return RestApiMatcher(
        tuple(compile_endpoint(e) for e in s.endpoints),
        frozenset(s.parameters),
        spec.value_test(s.parameter_value),
        frozenset(s.response_fields),
        spec.value_test(s.response_value),
        (s.unless_parameter.name, spec.value_test(s.unless_parameter.value)) if s.unless_parameter else None,
    )


def evaluate(entries: Iterable[tuple[Policy, RestApiMatcher]], call: RestCall) -> Iterator[tuple[Policy, str, Span]]:
    for policy, m in entries:
        for matched, span in hits(m, call):
            yield policy, matched, span


def hits(m: RestApiMatcher, call: RestCall) -> Iterator[tuple[str, Span]]:
    if not any(e.matches(call.method, call.path) for e in m.endpoints):
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
