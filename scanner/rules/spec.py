"""What every matcher kind shares: the base of its `match:` format (`Spec`), of its compiled matcher,
and value tests.

A matcher kind is one module beside this one (`template_include.py`, `command.py`, …) ending in its
record (`scanner.rules.kind.MatcherKind`); `scanner.rules.table` lists the modules once. Nothing here
imports pydantic: a spec is a plain class the loader validates through pydantic on a cache miss only
(`scanner.rules.schema.validated`), and a compiled catalog read back from the cache needs neither.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from scanner.core.tree import Tagged

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
    """A constraint on a matched value; exactly one of them (`VALUE_TESTS`, `value_test`).
    `equals`, `one_of` and `regex` test a scalar (each item of a list); `non_empty` and `tag` test
    the value as a whole."""

    equals: str | int | bool | None = None
    one_of: tuple[str | int | bool, ...] | None = None
    regex: str | None = None
    # `true`: the value configures something — not null, not a blank string, not an empty map or list
    non_empty: bool | None = None
    tag: str | None = field(None, pattern=r"^!\S+$")  # written under this YAML tag (`!reference`)


# The keys of `value:`, one of which a policy gives.
VALUE_TESTS = ("equals", "one_of", "regex", "non_empty", "tag")


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
    non_empty: bool = False
    tag: str | None = None

    @property
    def whole(self) -> bool:
        """Whether a list is tested as one value (`non_empty`, `tag`), not item by item."""
        return self.non_empty or self.tag is not None

    def accepts(self, value: Any) -> bool:
        if self.non_empty:
            return not _empty(value)
        if self.tag is not None:
            return isinstance(value, Tagged) and value.tag == self.tag
        if self.has_equals:
            return bool(value == self.equals and type(value) is type(self.equals))
        if self.one_of is not None:
            return value in self.one_of
        if self.regex is not None:
            return isinstance(value, str) and self.regex.search(value)
        return True


def _empty(value: Any) -> bool:
    """A value that configures nothing: null, a blank string, an empty map or list."""
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, (dict, list, tuple)):
        return not value
    return False


class Regex:
    """A policy's regular expression, run by RE2 (`google-re2`): RE2's syntax has no lookaround and no
    backreferences, so every match takes time linear in the text, for the catalog's patterns and for
    the ones users add (docs/custom-policies.md). A pattern RE2 cannot compile is refused when the
    policy is loaded. A group named `match` marks what a finding reports; the rest of the pattern is
    context (`(?P<match>/-/jwks)(?:[^\\w/-]|$)`: the address, when no word character follows it).

    Checked when the policy is compiled but compiled again only when first used: the compiled catalog
    is unpickled on every start, and a scan uses few of the catalog's patterns."""

    __slots__ = ("pattern", "_compiled", "_group")

    def __init__(self, pattern: str, compiled: Any = None) -> None:
        self.pattern = pattern
        self._compiled = compiled
        self._group = -1  # the index of the group `match` (0: the whole match), known once compiled

    def __reduce__(self) -> tuple[type[Regex], tuple[str]]:
        return Regex, (self.pattern,)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Regex) and other.pattern == self.pattern

    def __hash__(self) -> int:
        return hash(self.pattern)

    @property
    def compiled(self) -> Any:
        """The RE2 object (`re2._Regexp`; the bindings carry no types)."""
        if self._compiled is None:
            self._compiled = _re2_compile(self.pattern)
        return self._compiled

    def search(self, text: str) -> bool:
        """Whether the pattern matches anywhere in `text`."""
        return self.compiled.search(_utf8(text)) is not None

    def finditer(self, text: str) -> Iterator[tuple[int, int, int, int]]:
        """Each match, left to right, as character offsets of `text`: its start and end, then the
        start and end of what it reports (the group `match` when it took part, else the match)."""
        compiled = self.compiled
        if self._group < 0:
            self._group = compiled.groupindex.get("match", 0)
        data = _utf8(text)
        to_char = _offsets(data) if len(data) != len(text) else None  # ASCII: bytes are characters
        for m in compiled.finditer(data):
            start, end = m.span()
            g_start, g_end = m.span(self._group)
            if g_start < 0:
                g_start, g_end = start, end
            if to_char is None:
                yield start, end, g_start, g_end
            else:  # asked in growing order: start ≤ group start ≤ group end ≤ end ≤ the next start
                c_start, c_g_start, c_g_end = to_char(start), to_char(g_start), to_char(g_end)
                yield c_start, to_char(end), c_g_start, c_g_end


def _offsets(data: bytes) -> Callable[[int], int]:
    """Byte offset → character offset in UTF-8 `data`, for offsets asked in growing order: the
    characters between the last offset asked and this one are counted, one pass over the text."""
    last = [0, 0]

    def to_char(offset: int) -> int:
        if offset < last[0]:
            return len(data[:offset].decode("utf-8"))
        last[1] += len(data[last[0] : offset].decode("utf-8"))
        last[0] = offset
        return last[1]

    return to_char


_SURROGATE = re.compile("[\ud800-\udfff]")


def _utf8(text: str) -> bytes:
    """`text` as UTF-8 for RE2; a lone surrogate (a YAML or JSON escape) becomes U+FFFD, one
    character for one, so character offsets stay those of `text`."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text).encode("utf-8")


def _re2_compile(pattern: str) -> Any:
    import re2

    options = re2.Options()
    options.log_errors = False  # a refused pattern is reported once, by the loader
    return re2.compile(pattern, options)


RE2_NOTE = ("sunset runs policy patterns with RE2, whose syntax guarantees matching in time linear in the text: "
            "no lookahead or lookbehind, no backreferences")


def compile_regex(text: str, key: str = "regex") -> Regex:
    """A policy pattern checked by RE2 (a ValueError naming `key` and saying why when RE2 cannot
    compile it)."""
    import re2

    try:
        compiled = _re2_compile(text)
    except re2.error as exc:
        reason = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise ValueError(f"{key}: " * bool(key) + f"{text!r} is not RE2 syntax ({reason}); {RE2_NOTE}") from None
    return Regex(text, compiled)


@functools.lru_cache(maxsize=256)
def regex(text: str) -> Regex:
    """`compile_regex` once per pattern (the `replacement:` cases' `route` and `match`)."""
    return compile_regex(text)


def value_test(spec: ValueSpec | None) -> ValueTest | None:
    if spec is None:
        return None
    given = [f for f in VALUE_TESTS if f in spec.given]
    if len(given) != 1:
        raise ValueError(f"value: give exactly one of {', '.join(VALUE_TESTS)}")
    if given[0] == "equals":
        return ValueTest(equals=spec.equals, has_equals=True)
    if given[0] == "one_of":
        return ValueTest(one_of=frozenset(spec.one_of or ()))
    if given[0] == "non_empty":
        if spec.non_empty is not True:
            raise ValueError("value.non_empty: only `true` (leave `value:` out to accept empty values too)")
        return ValueTest(non_empty=True)
    if given[0] == "tag":
        return ValueTest(tag=spec.tag)
    return ValueTest(regex=compile_regex(spec.regex or "", "value.regex"))


def checked_names(names: tuple[str, ...]) -> tuple[str, ...]:
    bad = [n for n in names if not VAR_NAME.match(n)]
    if bad:
        raise ValueError(f"names: not a variable name: {bad[0]!r}")
    return names
