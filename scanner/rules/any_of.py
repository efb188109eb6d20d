"""`any-of`: one deprecation written in several places — a `config.toml` key, a `gitlab-runner
register` flag and an environment variable are one policy with one id. Its members are compiled by
the table it is given (`scanner.rules.table.build_matcher`); members cannot nest. It reads nothing
itself: each member is evaluated with the policies of its own kind, and the policy applies by
default where any member does."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from scanner.rules import spec
from scanner.rules.kind import MatcherKind


class Spec(spec.Spec):
    matchers: tuple[dict[str, Any], ...] = spec.field(min_length=2)


@dataclass(frozen=True, slots=True)
class AnyOfMatcher(spec.Matcher):
    kind: ClassVar[str] = "any-of"
    matchers: tuple[spec.Matcher, ...]


def compile(s: Spec, build: spec.Build) -> AnyOfMatcher:
    members = []
    for i, raw in enumerate(s.matchers):
        if raw.get("kind") == "any-of":
            raise ValueError(f"matchers.{i}.kind: unknown or nested matcher kind 'any-of'")
        try:
            members.append(build(raw))
        except ValueError as exc:
            raise ValueError(f"matchers.{i}.{exc}") from None
    return AnyOfMatcher(tuple(members))


def leaves(matcher: spec.Matcher) -> Iterator[spec.Matcher]:
    """The matchers of an `any-of`, or the matcher itself."""
    if isinstance(matcher, AnyOfMatcher):
        yield from matcher.matchers
    else:
        yield matcher


KIND: MatcherKind[Spec, AnyOfMatcher, None] = MatcherKind(Spec, AnyOfMatcher, compile, {})
