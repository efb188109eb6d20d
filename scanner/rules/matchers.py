"""The closed set of matcher kinds a policy may use, chosen in one explicit dict.

Each kind is a pydantic model of its parameters (unknown keys rejected) that compiles
once at load time into an immutable `Matcher`. Evaluation lives in `scanner.readers.ci`, which
dispatches on the matcher's type through indexes built once per scan; nothing here
registers itself at import time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from jsonpath_ng.jsonpath import JSONPath
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from scanner.readers.api.paths import Endpoint, compile_endpoint
from scanner.rules.jsonpaths import compile_path
from scanner.rules.settingkinds import (
    SETTING_SPEC_TYPES,
    AnyOfSpec,
    ImplicitDefaultSpec,
    RequiredKeysSpec,
    SecretFileSpec,
    SettingMatcher,
    compile_setting,
)

VAR_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ValueSpec(_Spec):
    """A constraint on a matched scalar value; at most one of the three."""

    equals: str | int | bool | None = None
    one_of: tuple[str | int | bool, ...] | None = None
    regex: str | None = None


class TemplateIncludeSpec(_Spec):
    kind: Literal["template-include"]
    templates: tuple[str, ...] = Field(min_length=1)


class CiVariableSpec(_Spec):
    kind: Literal["ci-variable"]
    names: tuple[str, ...] = Field(min_length=1)
    value: ValueSpec | None = None


class VariableReferenceSpec(_Spec):
    kind: Literal["variable-reference"]
    names: tuple[str, ...] = Field(min_length=1)


class JsonPathSpec(_Spec):
    kind: Literal["jsonpath"]
    path: str
    value: ValueSpec | None = None


class CommandSpec(_Spec):
    kind: Literal["command"]
    programs: tuple[str, ...] = Field(min_length=1)
    subcommand: str | None = None
    flags: tuple[str, ...] = ()
    env: tuple[str, ...] = ()
    value: ValueSpec | None = None  # only flag and variable values that pass (`--shell cmd`)


class JobTokenReachSpec(_Spec):
    kind: Literal["job-token-reach"]


class RestApiSpec(_Spec):
    """Calls to REST v4 endpoints (`PUT /runners/:id`); without `parameters` and
    `response_fields` the call itself is reported, else each named field it sends or reads."""

    kind: Literal["rest-api"]
    endpoints: tuple[str, ...] = Field(min_length=1)
    parameters: tuple[str, ...] = ()  # form fields, query parameters, JSON body keys
    parameter_value: ValueSpec | None = None
    response_fields: tuple[str, ...] = ()  # fields read from the call's response (jq, Python)
    response_value: ValueSpec | None = None  # only reads compared with such a value


class GraphqlRuleSpec(_Spec):
    """Fields selected by name, where the selection's type is known from `on` (the operation
    root, a fragment's type condition) or from the parent path (`under: [runners.nodes]`)."""

    fields: tuple[str, ...] = Field(min_length=1)
    on: tuple[str, ...] = ()
    under: tuple[str, ...] = ()
    arguments: tuple[str, ...] = ()  # report these arguments (`active`, `input.direction`)
    without_argument: str | None = None  # report the field when this argument is absent


class GraphqlSpec(_Spec):
    kind: Literal["graphql"]
    rules: tuple[GraphqlRuleSpec, ...] = Field(min_length=1)


MATCHER_SPECS: dict[str, type[BaseModel]] = {  # settings kinds have their own base (scanner.readers.settings)
    "template-include": TemplateIncludeSpec,
    "ci-variable": CiVariableSpec,
    "variable-reference": VariableReferenceSpec,
    "jsonpath": JsonPathSpec,
    "command": CommandSpec,
    "job-token-reach": JobTokenReachSpec,
    "rest-api": RestApiSpec,
    "graphql": GraphqlSpec,
    "any-of": AnyOfSpec,
    "implicit-default": ImplicitDefaultSpec,
    "required-keys": RequiredKeysSpec,
    "secret-file": SecretFileSpec,
}


@dataclass(frozen=True, slots=True)
class ValueTest:
    equals: Any = None
    has_equals: bool = False
    one_of: frozenset[Any] | None = None
    regex: re.Pattern[str] | None = None

    def accepts(self, value: Any) -> bool:
        if self.has_equals:
            return bool(value == self.equals and type(value) is type(self.equals))
        if self.one_of is not None:
            return value in self.one_of
        if self.regex is not None:
            return isinstance(value, str) and self.regex.search(value) is not None
        return True


@dataclass(frozen=True, slots=True)
class TemplateIncludeMatcher:
    templates: frozenset[str]


@dataclass(frozen=True, slots=True)
class CiVariableMatcher:
    names: frozenset[str]
    value: ValueTest | None = None


@dataclass(frozen=True, slots=True)
class VariableReferenceMatcher:
    names: frozenset[str]
    pattern: re.Pattern[str]


@dataclass(frozen=True, slots=True)
class JsonPathMatcher:
    expression: JSONPath
    text: str
    required_keys: frozenset[str]
    value: ValueTest | None


@dataclass(frozen=True, slots=True)
class CommandMatcher:
    programs: frozenset[str]
    subcommand: str | None
    flags: frozenset[str]
    env: frozenset[str]
    value: ValueTest | None = None


@dataclass(frozen=True, slots=True)
class JobTokenReachMatcher:
    """No parameters: the projects a job reaches are found by fixed logic (`scanner.rules.reach`)."""


@dataclass(frozen=True, slots=True)
class RestApiMatcher:
    endpoints: tuple[Endpoint, ...]
    parameters: frozenset[str]
    parameter_value: ValueTest | None
    response_fields: frozenset[str]
    response_value: ValueTest | None


@dataclass(frozen=True, slots=True)
class GraphqlRule:
    fields: frozenset[str]
    on: frozenset[str]
    under: tuple[tuple[str, ...], ...]
    arguments: frozenset[str]
    without_argument: str | None


@dataclass(frozen=True, slots=True)
class GraphqlMatcher:
    rules: tuple[GraphqlRule, ...]


Matcher = (
    TemplateIncludeMatcher
    | CiVariableMatcher
    | VariableReferenceMatcher
    | JsonPathMatcher
    | CommandMatcher
    | JobTokenReachMatcher
    | RestApiMatcher
    | GraphqlMatcher
    | SettingMatcher
)


def _compile_regex(text: str) -> re.Pattern[str]:
    try:
        return re.compile(text)
    except re.error as exc:
        raise ValueError(f"invalid regex {text!r}: {exc}") from None


def _value_test(spec: ValueSpec | None) -> ValueTest | None:
    if spec is None:
        return None
    given = [f for f in ("equals", "one_of", "regex") if f in spec.model_fields_set]
    if len(given) != 1:
        raise ValueError("value: give exactly one of equals, one_of, regex")
    if given[0] == "equals":
        return ValueTest(equals=spec.equals, has_equals=True)
    if given[0] == "one_of":
        return ValueTest(one_of=frozenset(spec.one_of or ()))
    return ValueTest(regex=_compile_regex(spec.regex or ""))


def _compile_jsonpath(spec: JsonPathSpec) -> JsonPathMatcher:
    expr, keys = compile_path(spec.path)
    return JsonPathMatcher(expr, spec.path, keys, _value_test(spec.value))


def build_matcher(raw: dict[str, Any]) -> Matcher:
    """Validate a policy's `match:` mapping and compile it."""
    spec_type = MATCHER_SPECS[raw["kind"]]
    try:
        spec = spec_type.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "kind"
        raise ValueError(f"{where}: {err['msg']}") from None
    if isinstance(spec, TemplateIncludeSpec):
        return TemplateIncludeMatcher(frozenset(spec.templates))
    if isinstance(spec, CiVariableSpec):
        return CiVariableMatcher(frozenset(_checked_names(spec.names)), _value_test(spec.value))
    if isinstance(spec, VariableReferenceSpec):
        names = _checked_names(spec.names)
        alt = "|".join(sorted(map(re.escape, names), key=len, reverse=True))
        pattern = re.compile(rf"(?:\$\{{?|%|\$env:)({alt})(?![A-Za-z0-9_])")
        return VariableReferenceMatcher(frozenset(names), pattern)
    if isinstance(spec, JsonPathSpec):
        return _compile_jsonpath(spec)
    if isinstance(spec, CommandSpec):
        programs, flags, env = frozenset(spec.programs), frozenset(spec.flags), frozenset(spec.env)
        return CommandMatcher(programs, spec.subcommand, flags, env, _value_test(spec.value))
    if isinstance(spec, RestApiSpec):
        return RestApiMatcher(
            tuple(compile_endpoint(e) for e in spec.endpoints),
            frozenset(spec.parameters),
            _value_test(spec.parameter_value),
            frozenset(spec.response_fields),
            _value_test(spec.response_value),
        )
    if isinstance(spec, GraphqlSpec):
        return GraphqlMatcher(tuple(_graphql_rule(r) for r in spec.rules))
    if isinstance(spec, SETTING_SPEC_TYPES):
        return compile_setting(spec)
    return JobTokenReachMatcher()


def _graphql_rule(spec: GraphqlRuleSpec) -> GraphqlRule:
    under = tuple(tuple(u.split(".")) for u in spec.under)
    arguments = frozenset(spec.arguments)
    return GraphqlRule(frozenset(spec.fields), frozenset(spec.on), under, arguments, spec.without_argument)


def _checked_names(names: tuple[str, ...]) -> tuple[str, ...]:
    bad = [n for n in names if not re.match(VAR_NAME, n)]
    if bad:
        raise ValueError(f"names: not a variable name: {bad[0]!r}")
    return names
