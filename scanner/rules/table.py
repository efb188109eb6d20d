"""The closed set of matcher kinds a policy may use, in one explicit dict (`RULE_KINDS`).

Each row names the kind's spec (`scanner.rules.schema`, the file format), its module's compile step,
and the document facets it reads (`scanner.rules.facets`: what a policy applies to when it does not
say). Nothing registers itself at import time; adding a kind is one module, its spec and one row here.
Only the loader needs this table (on a cache miss): it imports pydantic through the schema.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

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
    schema,
    secret_file,
    template_include,
    template_unknown,
    text,
    unique_values,
    variable_reference,
)
from scanner.rules.schema import Strict
from scanner.rules.spec import Matcher


@dataclass(frozen=True, slots=True)
class RuleKind:
    spec: type[Strict]
    compile: Callable[[Any, Callable[[dict[str, Any]], Matcher]], Matcher]
    facets: frozenset[str]


def _kind(spec: type[Strict], module: Any, *facets: str) -> RuleKind:
    return RuleKind(spec, module.compile, frozenset(facets))


RULE_KINDS: dict[str, RuleKind] = {
    "template-include": _kind(schema.TemplateIncludeSpec, template_include, "ci-includes"),
    "template-unknown": _kind(schema.TemplateUnknownSpec, template_unknown, "ci-includes"),
    "ci-variable": _kind(schema.CiVariableSpec, ci_variable, "ci-variables", "settings-env"),
    "variable-reference": _kind(schema.VariableReferenceSpec, variable_reference, "ci-variables", "scripts"),
    "jsonpath": _kind(schema.JsonPathSpec, jsonpath, "tree"),
    "command": _kind(schema.CommandSpec, command, "scripts", "settings-env", "settings-commands"),
    "job-token-reach": _kind(schema.JobTokenReachSpec, job_token_reach, "ci-jobs", "scripts"),
    "rest-api": _kind(schema.RestApiSpec, rest_api, "scripts", "rest-calls"),
    "graphql": _kind(schema.GraphqlSpec, graphql, "scripts", "graphql-documents"),
    "any-of": _kind(schema.AnyOfSpec, any_of),  # its members' facets
    "implicit-default": _kind(schema.ImplicitDefaultSpec, implicit_default, "settings-tree"),
    "required-keys": _kind(schema.RequiredKeysSpec, required_keys, "settings-tree"),
    "secret-file": _kind(schema.SecretFileSpec, secret_file, "settings-tree"),
    "text": _kind(schema.TextSpec, text, "text"),
    "unique-values": _kind(schema.UniqueValuesSpec, unique_values, "settings-tree"),
}


def build_matcher(raw: dict[str, Any]) -> Matcher:
    """Validate a policy's `match:` mapping and compile it."""
    kind = RULE_KINDS.get(raw.get("kind"))  # type: ignore[arg-type]
    if kind is None:
        raise ValueError(f"kind: unknown or nested matcher kind {raw.get('kind')!r}")
    try:
        spec = kind.spec.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "kind"
        raise ValueError(f"{where}: {err['msg']}") from None
    return kind.compile(spec, build_matcher)


def facets_of(matcher: Matcher) -> frozenset[str]:
    """The document facets a compiled matcher reads (an `any-of`: its members')."""
    return frozenset().union(*(RULE_KINDS[m.kind].facets for m in any_of.leaves(matcher)))
