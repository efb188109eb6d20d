"""The closed set of matcher kinds a policy may use, in one explicit dict (`RULE_KINDS`).

Each row names the kind's module parts: the pydantic spec of its parameters, its compile step, the
document facets it reads (`scanner.rules.facets`: what a policy applies to when it does not say)
and, for kinds evaluated on scripts, the words a script must contain to be worth reading. Nothing
registers itself at import time; adding a kind is one module and one row here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
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
    secret_file,
    template_include,
    variable_reference,
)
from scanner.rules.spec import Matcher, Spec


@dataclass(frozen=True, slots=True)
class RuleKind:
    spec: type[Spec]
    compile: Callable[[Any, Callable[[dict[str, Any]], Matcher]], Matcher]
    facets: frozenset[str]
    words: Callable[[Any], Iterable[str]] | None = None  # prefilter words for script text


def _kind(module: Any, *facets: str, words: bool = False) -> RuleKind:
    return RuleKind(module.Spec, module.compile, frozenset(facets), module.words if words else None)


RULE_KINDS: dict[str, RuleKind] = {
    "template-include": _kind(template_include, "ci-includes"),
    "ci-variable": _kind(ci_variable, "ci-variables", "settings-env"),
    "variable-reference": _kind(variable_reference, "ci-variables", "scripts", words=True),
    "jsonpath": _kind(jsonpath, "tree"),
    "command": _kind(command, "scripts", "settings-env", "settings-commands", words=True),
    "job-token-reach": _kind(job_token_reach, "ci-jobs", "scripts", words=True),
    "rest-api": _kind(rest_api, "scripts", "rest-calls", words=True),
    "graphql": _kind(graphql, "scripts", "graphql-documents", words=True),
    "any-of": _kind(any_of),  # its members' facets
    "implicit-default": _kind(implicit_default, "settings-tree"),
    "required-keys": _kind(required_keys, "settings-tree"),
    "secret-file": _kind(secret_file, "settings-tree"),
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
