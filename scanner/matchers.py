"""The closed set of matcher kinds a policy may use, chosen in one explicit dict.

Each kind is a pydantic model of its parameters (unknown keys rejected) that compiles
once at load time into an immutable `Matcher`. Evaluation lives in `scanner.ci`, which
dispatches on the matcher's type through indexes built once per scan; nothing here
registers itself at import time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from jsonpath_ng.exceptions import JsonPathLexerError, JsonPathParserError
from jsonpath_ng.jsonpath import (
    Child,
    Descendants,
    Fields,
    Index,
    JSONPath,
    Root,
    Slice,
    This,
    Where,
    WhereNot,
    Wildcard,
)
from jsonpath_ng.parser import parse as jsonpath_parse
from pydantic import BaseModel, ConfigDict, Field, ValidationError

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


class JobTokenReachSpec(_Spec):
    kind: Literal["job-token-reach"]


MATCHER_SPECS: dict[str, type[_Spec]] = {
    "template-include": TemplateIncludeSpec,
    "ci-variable": CiVariableSpec,
    "variable-reference": VariableReferenceSpec,
    "jsonpath": JsonPathSpec,
    "command": CommandSpec,
    "job-token-reach": JobTokenReachSpec,
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


@dataclass(frozen=True, slots=True)
class JobTokenReachMatcher:
    pass


Matcher = (
    TemplateIncludeMatcher
    | CiVariableMatcher
    | VariableReferenceMatcher
    | JsonPathMatcher
    | CommandMatcher
    | JobTokenReachMatcher
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


def _required_keys(expr: JSONPath) -> frozenset[str]:
    """Literal field names the expression needs; a document lacking any is skipped.

    Recursive descent is refused: on a document built from aliases it walks the
    expanded tree, and it costs milliseconds per expression per file.
    """
    keys: set[str] = set()
    stack: list[JSONPath] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, Descendants):
            raise ValueError("recursive descent ('..') is not allowed in policy JSONPath")
        if isinstance(node, Child):
            stack.extend((node.left, node.right))
        elif isinstance(node, (Where, WhereNot)):
            stack.append(node.left)
        elif isinstance(node, Fields):
            keys.update(f for f in node.fields if f != "*")
        elif not isinstance(node, (Root, Slice, Index, This, Wildcard)):
            raise ValueError(f"unsupported JSONPath construct {type(node).__name__}")
    return frozenset(keys)


def _compile_jsonpath(spec: JsonPathSpec) -> JsonPathMatcher:
    try:
        expr = jsonpath_parse(spec.path)
    except (JsonPathLexerError, JsonPathParserError, Exception) as exc:  # noqa: BLE001 - parser raises bare Exception
        raise ValueError(f"invalid JSONPath {spec.path!r}: {exc}") from None
    return JsonPathMatcher(expr, spec.path, _required_keys(expr), _value_test(spec.value))


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
        return CommandMatcher(frozenset(spec.programs), spec.subcommand, frozenset(spec.flags), frozenset(spec.env))
    return JobTokenReachMatcher()


def _checked_names(names: tuple[str, ...]) -> tuple[str, ...]:
    bad = [n for n in names if not re.match(VAR_NAME, n)]
    if bad:
        raise ValueError(f"names: not a variable name: {bad[0]!r}")
    return names
