"""The format of a policy file, as pydantic models: the policy itself, its `match:` (one spec per
matcher kind) and, through `scanner.rules.fixes`, its `fix:`. Unknown keys are rejected everywhere.

Only the loader imports this (`scanner.rules.catalog`, on a cache miss): a scan whose compiled
catalog comes from the cache never imports pydantic. The loaded policy is plain data
(`scanner.rules.policy`); each matcher kind's module compiles its spec (`scanner.rules.table`).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from scanner.core.versions import RELEASE_RE
from scanner.rules.facets import check_kind_names
from scanner.rules.fixes import FixSpec


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


Release = Annotated[str, Field(pattern=RELEASE_RE.pattern)]


class Reference(Strict):
    title: str
    url: str = Field(pattern=r"^https://")


class HistoryEntry(Strict):
    """One thing GitLab's own record did to the milestone after it was first announced."""

    release: Release
    event: Literal["announced", "deprecated", "moved", "postponed", "canceled", "withdrawn", "removed"]
    removed_in: Release | None = None
    note: str
    reference: str = Field(pattern=r"^https://")


class Example(Strict):
    before: str
    after: str


class ReplacementCase(Strict):
    """One case of `replacement:` (`scanner.rules.hints`): the first that fits a finding gives its hint."""

    text: str = Field(min_length=1)
    kinds: tuple[str, ...] = ()  # document kinds (gitlab.rb vs gitlab.yml syntax); empty: any
    route: str | None = None  # a regex searched in the finding's symbolic path
    match: str | None = None  # a regex searched in what matched

    @field_validator("text")
    @classmethod
    def _placeholders(cls, value: str) -> str:
        from scanner.rules.hints import problems

        if found := problems(value):
            raise ValueError(found[0])
        return value

    @field_validator("kinds")
    @classmethod
    def _known_kinds(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        check_kind_names(value)
        return value

    @field_validator("route", "match")
    @classmethod
    def _regex(cls, value: str | None) -> str | None:
        try:
            re.compile(value or "")
        except re.error as exc:
            raise ValueError(f"not a regular expression: {exc}") from None
        return value


class PolicyModel(Strict):
    title: str = Field(min_length=5, max_length=100)
    summary: str
    message: str = Field(description="one finding's message; `{match}` is replaced by what matched")
    rationale: str
    remediation: str
    # The fix hint: a text, or cases tried in order; placeholders are filled from each finding.
    replacement: tuple[ReplacementCase, ...] | None = Field(default=None, min_length=1)
    deprecated_in: Release | None = None
    removed_in: Release | None = None
    breaking: bool
    informational: bool = False
    # GitLab's deprecations list (`gitlab`), or the REST v5, GraphQL and release deprecation summary sunset
    # began from (`deprecation-summary`); anything else names a policy of your own: `local`, or your
    # organisation's name (docs/custom-policies.md).
    origin: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9 ._/@-]{0,59}$")
    history: tuple[HistoryEntry, ...] = ()
    references: tuple[Reference, ...] = Field(min_length=1)
    # The document kinds it applies to; left out, every kind carrying a facet its matcher reads
    # (`scanner.rules.facets`). Filled in when the policy is loaded.
    applies_to: tuple[str, ...] | None = Field(default=None, min_length=1)
    match: dict[str, Any]
    example: Example
    # What `sunset fix` may rewrite (scanner.rules.fixes): one mapping or a list of them.
    fix: tuple[FixSpec, ...] = ()

    @field_validator("applies_to")
    @classmethod
    def _known_kinds(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        check_kind_names(value or ())
        return value

    @field_validator("replacement", mode="before")
    @classmethod
    def _one_text(cls, value: Any) -> Any:
        return [{"text": value}] if isinstance(value, str) else value  # a text is one case

    @field_validator("fix", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, dict) else value

    @field_validator("match")
    @classmethod
    def _has_kind(cls, value: dict[str, Any]) -> dict[str, Any]:
        if not isinstance(value.get("kind"), str):
            raise ValueError("a matcher needs a `kind`")
        return value


# --- `match:`, one spec per matcher kind (compiled by the kind's module; `scanner.rules.table`) ---


class ValueSpec(Strict):
    """A constraint on a matched scalar value; at most one of the three."""

    equals: str | int | bool | None = None
    one_of: tuple[str | int | bool, ...] | None = None
    regex: str | None = None


class TemplateIncludeSpec(Strict):
    kind: Literal["template-include"]
    templates: tuple[str, ...] = Field(min_length=1)
    unless_set: tuple[str, ...] = ()  # variables that, set anywhere in the file, settle it (no finding)
    if_set: tuple[str, ...] = ()  # when given, only files setting one of these variables are reported


class TemplateUnknownSpec(Strict):
    kind: Literal["template-unknown"]


class CiVariableSpec(Strict):
    kind: Literal["ci-variable"]
    names: tuple[str, ...] = Field(min_length=1)
    value: ValueSpec | None = None


class VariableReferenceSpec(Strict):
    kind: Literal["variable-reference"]
    names: tuple[str, ...] = Field(min_length=1)


class TextSpec(Strict):
    kind: Literal["text"]
    regex: str  # searched in the file's text; each match is a finding at its span
    condition: str | None = None  # as on `jsonpath`: what the file alone cannot show ("If …", a warning)


class WithinSpec(Strict):
    """A JSONPath (and value) that must find something in the same document for the policy to apply."""

    path: str
    value: ValueSpec | None = None


class JsonPathSpec(Strict):
    kind: Literal["jsonpath"]
    path: str
    value: ValueSpec | None = None
    key: ValueSpec | None = None  # a test on the name of the key matched (`$.*` with a key longer than 255)
    within: tuple[WithinSpec, ...] = ()  # any of them in the document (a compose file that runs GitLab)
    # what the file alone cannot show ("this project runs Dependency Scanning"): the finding says
    # "If …:" and is at most a warning
    condition: str | None = None


class CommandSpec(Strict):
    kind: Literal["command"]
    programs: tuple[str, ...] = Field(min_length=1)
    subcommand: str | None = None  # also with Rake's `[args]`; a trailing `*` matches any word it begins
    flags: tuple[str, ...] = ()
    env: tuple[str, ...] = ()
    value: ValueSpec | None = None  # only flag and variable values that pass (`--shell cmd`)


class JobTokenReachSpec(Strict):
    kind: Literal["job-token-reach"]


class UnlessParameterSpec(Strict):
    """The call is not reported when it sends this parameter (with a value the test accepts, or one
    sunset cannot read: a `$VAR` could be the right value)."""

    name: str
    value: ValueSpec | None = None


class RestApiSpec(Strict):
    kind: Literal["rest-api"]
    endpoints: tuple[str, ...] = Field(min_length=1)
    parameters: tuple[str, ...] = ()  # form fields, query parameters, JSON body keys
    parameter_value: ValueSpec | None = None
    unless_parameter: UnlessParameterSpec | None = None
    response_fields: tuple[str, ...] = ()  # fields read from the call's response (jq, Python)
    response_value: ValueSpec | None = None  # only reads compared with such a value


class GraphqlRuleSpec(Strict):
    fields: tuple[str, ...] = ()
    on: tuple[str, ...] = ()
    under: tuple[str, ...] = ()
    arguments: tuple[str, ...] = ()  # report these arguments (`active`, `input.direction`)
    values: tuple[str, ...] = ()  # only where the argument's value (enum, string, list item) is one of these
    without_argument: str | None = None  # report the field when this argument is absent
    variable_types: tuple[str, ...] = ()  # report `$var: Type` declarations of these named types

    @model_validator(mode="after")
    def _one_target(self) -> GraphqlRuleSpec:
        if bool(self.fields) == bool(self.variable_types):
            raise ValueError("give `fields` or `variable_types`, not both or neither")
        if self.values and not self.arguments:
            raise ValueError("`values` needs `arguments`")
        return self


class GraphqlSpec(Strict):
    kind: Literal["graphql"]
    rules: tuple[GraphqlRuleSpec, ...] = Field(min_length=1)


class AnyOfSpec(Strict):
    kind: Literal["any-of"]
    matchers: tuple[dict[str, Any], ...] = Field(min_length=2)


class ImplicitDefaultSpec(Strict):
    kind: Literal["implicit-default"]
    path: str  # JSONPath of the setting; each mapping that would hold it is checked
    default: str | int | bool  # what GitLab uses when the setting is absent
    when: str | None = None  # a sibling key that must be literally `true` (`enabled`)


class RequiredKeysSpec(Strict):
    kind: Literal["required-keys"]
    path: str  # JSONPath of the mappings to check
    keys: tuple[str, ...] = ()
    first: str | None = None  # when present, this key must come first
    where: str | None = None  # check only mappings holding this key (`secrets`); hidden (`.name`) ones are skipped
    # CI jobs: keys come also from the jobs a mapping `extends:` in the same file; one from elsewhere: not judged
    extends: bool = False
    skip: tuple[str, ...] = ()  # mappings holding any of these keys are not judged (`known_hosts_file`)
    unless: str | None = None  # JSONPath: when it matches in the document, nothing is reported
    condition: str | None = None  # as on `jsonpath`: what the file alone cannot show ("If …", a warning)


class UniqueValuesSpec(Strict):
    kind: Literal["unique-values"]
    path: str  # JSONPath of lists of mappings (`$.gitaly.configuration.storage`)
    key: str  # the item key whose value must not repeat within one list (`path`)


class SecretFileSpec(Strict):
    kind: Literal["secret-file"]
    path: str  # JSONPath of the setting holding the file path
    key_bytes: int = Field(default=32, ge=1)
