"""The format of a policy file, as pydantic models: the policy itself, its `match:` (the `Spec` of
its matcher kind, turned into a model here: `validated`) and, through `scanner.rules.fixes`, its
`fix:`. Unknown keys are rejected everywhere.

Only the loader imports this (`scanner.rules.catalog`, on a cache miss): a scan whose compiled
catalog comes from the cache never imports pydantic. The loaded policy is plain data
(`scanner.rules.policy`); each matcher kind's module compiles its spec (`scanner.rules.table`).
"""

from __future__ import annotations

import re
import types
import typing
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, field_validator, model_validator

from scanner.core.versions import RELEASE_RE
from scanner.rules.documents import check_kind_names
from scanner.rules.fixes import FixSpec
from scanner.rules.spec import REQUIRED, Constrained, Spec


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


# --- `match:`: a matcher kind's `Spec` (a plain class) as a pydantic model ---


def validated(spec: type[Spec], raw: dict[str, Any], kind: str | None = None) -> Any:
    """`raw` checked against `spec` (with `kind: <kind>` when it is a matcher kind's own spec) and
    returned as an instance of it; a problem is a ValueError naming the key (`rules.0: …`)."""
    try:
        model = _model(spec, kind).model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "kind"
        raise ValueError(f"{where}: {err['msg']}") from None
    return _plain(model)


_MODELS: dict[tuple[type[Spec], str | None], type[BaseModel]] = {}
_SPECS: dict[type[BaseModel], type[Spec]] = {}  # each generated model → the spec it was made from


def _model(spec: type[Spec], kind: str | None = None) -> type[BaseModel]:
    if (spec, kind) in _MODELS:
        return _MODELS[spec, kind]
    hints = typing.get_type_hints(spec)
    fields: dict[str, Any] = {"kind": (Literal[kind], ...)} if kind is not None else {}
    for name, hint in hints.items():
        if name in Spec.__annotations__:
            continue
        default = getattr(spec, name, REQUIRED)
        if isinstance(default, Constrained):
            fields[name] = (_pydantic(hint), Field(default.default, **default.constraints))
        else:
            fields[name] = (_pydantic(hint), default)
    validators: dict[str, Any] = {}
    if spec.check is not Spec.check:
        def check(model: Any) -> Any:
            spec.check(model)
            return model

        validators["check"] = model_validator(mode="after")(check)
    model: type[BaseModel] = create_model(spec.__name__, __base__=Strict, __module__=spec.__module__,
                                          __validators__=validators, **fields)
    _MODELS[spec, kind] = model
    _SPECS[model] = spec
    return model


def _pydantic(hint: Any) -> Any:
    """A spec's annotation with every `Spec` class in it replaced by its model."""
    if isinstance(hint, type) and issubclass(hint, Spec):
        return _model(hint)
    origin, args = get_origin(hint), get_args(hint)
    if origin is None or origin is Literal or not args:
        return hint
    converted = tuple(_pydantic(a) for a in args)
    if origin in (Union, types.UnionType):
        return Union[converted]  # noqa: UP007 - built from a tuple of members
    return origin[converted]


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        spec = _SPECS[type(value)]
        plain = spec.__new__(spec)
        for name in type(value).model_fields:
            setattr(plain, name, _plain(getattr(value, name)))
        plain.given = frozenset(value.model_fields_set)
        return plain
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    return value

