"""What every matcher kind shares: the base of its `match:` format (`Spec`), of its compiled matcher,
and value tests.

A matcher kind is one module beside this one (`template_include.py`, `command.py`, …) ending in its
record (`scanner.rules.kind.MatcherKind`); `scanner.rules.table` lists the modules once. Nothing here
imports pydantic: a spec is a plain class the loader validates through pydantic on a cache miss only
(`scanner.rules.schema.validated`), and a compiled catalog read back from the cache needs neither.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

VAR_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class Spec:
    """A `match:` mapping (or a part of one) as written in a policy file. A subclass declares the
    format as annotations and defaults — `field(...)` for a default with constraints, no default for a
    required key — and `check` for rules across keys. Unknown keys are rejected; `kind` is added for a
    matcher kind's own spec. `compile` receives an instance; `given` holds the keys the policy wrote."""

    given: frozenset[str] = frozenset()

    def check(self) -> None:
        """Raise ValueError when the keys, valid one by one, do not fit together."""


@dataclass(frozen=True, slots=True)
class Constrained:
    """A key's default (`REQUIRED`: none) with pydantic's constraints (`min_length`, `ge`, …)."""

    default: Any
    constraints: dict[str, Any]


REQUIRED: Any = ...


def field(default: Any = REQUIRED, **constraints: Any) -> Any:
    return Constrained(default, constraints)


class ValueSpec(Spec):
    """A constraint on a matched scalar value; exactly one of the three (`value_test`)."""

    equals: str | int | bool | None = None
    one_of: tuple[str | int | bool, ...] | None = None
    regex: str | None = None



class Matcher:
    """Base of every compiled matcher (frozen dataclasses); `kind` names its row in the table."""

    __slots__ = ()
    kind: ClassVar[str]

    def script_words(self) -> Iterable[str]:
        """Words a script must contain to be worth reading for this matcher (`scanner.rules.evaluate`)."""
        return ()


# A matcher kind that holds other matchers (`any-of`) compiles them through the table it is given.
Build = Callable[[dict[str, Any]], Matcher]


@dataclass(frozen=True, slots=True)
class ValueTest:
    equals: Any = None
    has_equals: bool = False
    one_of: frozenset[Any] | None = None
    regex: Regex | None = None

    def accepts(self, value: Any) -> bool:
        if self.has_equals:
            return bool(value == self.equals and type(value) is type(self.equals))
        if self.one_of is not None:
            return value in self.one_of
        if self.regex is not None:
            return isinstance(value, str) and self.regex.search(value) is not None
        return True


class Regex:
    """A policy's regular expression, checked when the policy is compiled but compiled again only
    when first used: the compiled catalog is unpickled on every start, unpickling an `re.Pattern`
    compiles it again, and a scan uses few of the catalog's patterns."""

    __slots__ = ("pattern", "_compiled")

    def __init__(self, pattern: str, compiled: re.Pattern[str] | None = None) -> None:
        self.pattern = pattern
        self._compiled = compiled

    def __reduce__(self) -> tuple[type[Regex], tuple[str]]:
        return Regex, (self.pattern,)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Regex) and other.pattern == self.pattern

    def __hash__(self) -> int:
        return hash(self.pattern)

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.pattern)
        return self._compiled

    def search(self, text: str) -> re.Match[str] | None:
        return self.compiled.search(text)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(text)


def compile_regex(text: str) -> Regex:
    try:
        return Regex(text, re.compile(text))
    except re.error as exc:
        raise ValueError(f"invalid regex {text!r}: {exc}") from None


def value_test(spec: ValueSpec | None) -> ValueTest | None:
    if spec is None:
        return None
    given = [f for f in ("equals", "one_of", "regex") if f in spec.given]
    if len(given) != 1:
        raise ValueError("value: give exactly one of equals, one_of, regex")
    if given[0] == "equals":
        return ValueTest(equals=spec.equals, has_equals=True)
    if given[0] == "one_of":
        return ValueTest(one_of=frozenset(spec.one_of or ()))
    return ValueTest(regex=compile_regex(spec.regex or ""))


def checked_names(names: tuple[str, ...]) -> tuple[str, ...]:
    bad = [n for n in names if not VAR_NAME.match(n)]
    if bad:
        raise ValueError(f"names: not a variable name: {bad[0]!r}")
    return names
