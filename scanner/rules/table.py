"""The closed set of matcher kinds a policy may use: one module each, listed once here (`RULE_KINDS`).

Each module ends in its record (`scanner.rules.kind.MatcherKind`): its `match:` format, its compile
step, the facets it reads and their evaluation. The loader validates and compiles through this table
(`build_matcher`), the evaluation loop dispatches through it (`scanner.rules.evaluate`). Nothing
registers itself at import time. The order is the order kinds reading one facet are evaluated.
"""

from __future__ import annotations

from typing import Any

from scanner.rules import (
    any_of,
    ci_variable,
    command,
    graphql,
    implicit_default,
    job_token_reach,
    jsonpath,
    required_keys,
    rest_api,
    secret_file,
    template_include,
    template_unknown,
    text,
    unique_values,
    variable_reference,
)
from scanner.rules.kind import MatcherKind
from scanner.rules.spec import Matcher

RULE_KINDS: dict[str, MatcherKind[Any, Any, Any]] = {
    module.KIND.name: module.KIND
    for module in (
        template_include,
        template_unknown,
        ci_variable,
        variable_reference,
        jsonpath,
        command,
        job_token_reach,
        rest_api,
        graphql,
        any_of,
        implicit_default,
        required_keys,
        secret_file,
        text,
        unique_values,
    )
}


def build_matcher(raw: dict[str, Any]) -> Matcher:
    """Validate a policy's `match:` mapping and compile it (pydantic is imported here, on a cache miss)."""
    from scanner.rules.schema import validated

    kind = RULE_KINDS.get(raw.get("kind"))  # type: ignore[arg-type]
    if kind is None:
        raise ValueError(f"kind: unknown or nested matcher kind {raw.get('kind')!r}")
    matcher: Matcher = kind.compile(validated(kind.spec, raw, kind=kind.name), build_matcher)
    return matcher


def facets_of(matcher: Matcher) -> frozenset[str]:
    """The document facets a policy with this matcher applies to by default (an `any-of`: its members')."""
    return frozenset().union(*(RULE_KINDS[m.kind].default_facets for m in any_of.leaves(matcher)))
