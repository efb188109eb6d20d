"""Matcher kinds that settings policies add to the closed set in `scanner.rules.matchers.MATCHER_SPECS`.

* `any-of` — one deprecation written in several places: a `config.toml` key, a
  `gitlab-runner register` flag and an environment variable are one policy with one id.
* `implicit-default` — a setting left out whose default is the deprecated value (a source
  install's `incoming_email` without `delivery_method` uses `sidekiq`).
* `required-keys` — mappings that must hold some keys (`ci:` next to `main:`) or one key first.
* `secret-file` — a setting naming a key file: the path must be absolute, and a file found in the
  scanned tree must hold a base64-encoded key of the expected size.

Specs compile once, at policy load time, into the frozen matchers below; they are evaluated
by `scanner.rules.settingchecks`. (`scanner.rules.matchers` is imported lazily here: it imports this.)
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from jsonpath_ng.jsonpath import Child, Fields, JSONPath
from pydantic import BaseModel, ConfigDict, Field

from scanner.rules.jsonpaths import compile_path, required_keys

if TYPE_CHECKING:
    from scanner.rules.matchers import Matcher


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AnyOfSpec(_Spec):
    kind: Literal["any-of"]
    matchers: tuple[dict[str, Any], ...] = Field(min_length=2)


class ImplicitDefaultSpec(_Spec):
    kind: Literal["implicit-default"]
    path: str  # JSONPath of the setting; each mapping that would hold it is checked
    default: str | int | bool  # what GitLab uses when the setting is absent
    when: str | None = None  # a sibling key that must be literally `true` (`enabled`)


class RequiredKeysSpec(_Spec):
    kind: Literal["required-keys"]
    path: str  # JSONPath of the mappings to check
    keys: tuple[str, ...] = ()
    first: str | None = None  # when present, this key must come first


class SecretFileSpec(_Spec):
    kind: Literal["secret-file"]
    path: str  # JSONPath of the setting holding the file path
    key_bytes: int = Field(default=32, ge=1)


@dataclass(frozen=True, slots=True)
class AnyOfMatcher:
    matchers: tuple[Matcher, ...]


@dataclass(frozen=True, slots=True)
class ImplicitDefaultMatcher:
    parent: JSONPath
    key: str
    required_keys: frozenset[str]
    default: Any
    when: str | None


@dataclass(frozen=True, slots=True)
class RequiredKeysMatcher:
    expression: JSONPath
    required_keys: frozenset[str]
    keys: tuple[str, ...]
    first: str | None


@dataclass(frozen=True, slots=True)
class SecretFileMatcher:
    expression: JSONPath
    required_keys: frozenset[str]
    key_bytes: int


SettingSpec = AnyOfSpec | ImplicitDefaultSpec | RequiredKeysSpec | SecretFileSpec
SETTING_SPEC_TYPES = (AnyOfSpec, ImplicitDefaultSpec, RequiredKeysSpec, SecretFileSpec)
SettingMatcher = AnyOfMatcher | ImplicitDefaultMatcher | RequiredKeysMatcher | SecretFileMatcher


def compile_setting(spec: SettingSpec) -> SettingMatcher:
    if isinstance(spec, AnyOfSpec):
        return AnyOfMatcher(tuple(_member(i, raw) for i, raw in enumerate(spec.matchers)))
    if isinstance(spec, ImplicitDefaultSpec):
        expr, _ = compile_path(spec.path)
        if not (isinstance(expr, Child) and isinstance(expr.right, Fields) and len(expr.right.fields) == 1):
            raise ValueError(f"path: {spec.path!r} must end in one plain key (`$.x.delivery_method`)")
        return ImplicitDefaultMatcher(
            expr.left, expr.right.fields[0], required_keys(expr.left), spec.default, spec.when
        )
    if isinstance(spec, RequiredKeysSpec):
        if not spec.keys and spec.first is None:
            raise ValueError("give `keys`, `first`, or both")
        expr, keys = compile_path(spec.path)
        return RequiredKeysMatcher(expr, keys, spec.keys, spec.first)
    expr, keys = compile_path(spec.path)
    return SecretFileMatcher(expr, keys, spec.key_bytes)


def _member(i: int, raw: dict[str, Any]) -> Matcher:
    from scanner.rules.matchers import MATCHER_SPECS, build_matcher

    kind = raw.get("kind")
    if kind not in MATCHER_SPECS or kind == "any-of":
        raise ValueError(f"matchers.{i}.kind: unknown or nested matcher kind {kind!r}")
    try:
        return build_matcher(raw)
    except ValueError as exc:
        raise ValueError(f"matchers.{i}.{exc}") from None


def leaves(matcher: Matcher) -> Iterator[Matcher]:
    """The matchers of an `any-of`, or the matcher itself."""
    if isinstance(matcher, AnyOfMatcher):
        yield from matcher.matchers
    else:
        yield matcher
