"""Which fields of its input a jq filter reads, with their offsets in the filter text.

Only reads of the input objects' own fields count: `.version`, `.[].version`, `.[0].version`,
`map(.version)`, `select(.status == "paused")`, `{id, version}`, `"\\(.version)"`,
`has("version")`. A field reached through another field (`.projects[].name`) or through a
`$variable` is not a read of the input's fields, and after a stage that descends into a field
(`.projects[] | .name`) the rest of that pipeline reads something else. The scanner never
fails: text it does not understand is skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
_CMP_AFTER = re.compile(r'\s*(?:==|!=)\s*"((?:[^"\\]|\\.)*)"')
_CMP_BEFORE = re.compile(r'"((?:[^"\\]|\\.)*)"\s*(?:==|!=)\s*$')


@dataclass(frozen=True, slots=True)
class JqRead:
    field: str
    offset: int
    compared: tuple[str, ...] = ()


@dataclass(slots=True)
class _Group:
    nested: bool  # the input of this group no longer holds the API objects
    is_object: bool = False
    key_position: bool = False  # inside `{...}`, where a key may start
    terms: int = 0  # terms in the current stage
    field_chain: bool = False  # the current stage is a chain that went into a field
    reads: list[JqRead] = field(default_factory=list)


class _Scanner:
    def __init__(self, src: str) -> None:
        self.src = src
        self.i = 0
        self.groups = [_Group(nested=False)]
        self.out: list[JqRead] = []

    @property
    def g(self) -> _Group:
        return self.groups[-1]

    def run(self) -> list[JqRead]:
        while self.i < len(self.src):
            self._step()
        return self.out

    def _step(self) -> None:
        """Consume one token of the filter."""
        src, c = self.src, self.src[self.i]
        if c == "#":
            nl = src.find("\n", self.i)
            self.i = len(src) if nl < 0 else nl
        elif c == '"':
            self._string()
        elif c == ".":
            self._chain(var_rooted=False)
        elif c == "$":
            m = _IDENT.match(src, self.i + 1)
            self.i = m.end() if m else self.i + 1
            self._term(field_chain=False)
            if self.i < len(src) and src[self.i] in ".[":
                self._chain(var_rooted=True)
        elif c in "([{":
            self.g.terms += 1
            self.groups.append(_Group(self.g.nested, is_object=c == "{", key_position=c == "{"))
            self.i += 1
        elif c in ")]}":
            if len(self.groups) > 1:
                self.groups.pop()
            self.i += 1
        elif c == "|" and not src.startswith("|=", self.i):
            if self.g.terms == 1 and self.g.field_chain:
                self.g.nested = True  # `.projects[] | ...`: what follows reads projects
            self.g.terms, self.g.field_chain = 0, False
            self.i += 1
        elif c == ",":
            self.g.terms, self.g.field_chain = 0, False
            self.g.key_position = self.g.is_object
            self.i += 1
        elif c == ":" and self.g.is_object:
            self.g.key_position = False
            self.i += 1
        elif _IDENT.match(src, self.i):
            self._ident()
        else:
            self.i += 1

    def _term(self, field_chain: bool) -> None:
        self.g.terms += 1
        self.g.field_chain = field_chain

    def _string(self) -> None:
        """A string literal; `\\(...)` interpolations inside it are filters of their own."""
        src, i = self.src, self.i + 1
        while i < len(src) and src[i] != '"':
            if src.startswith("\\(", i):
                depth = len(self.groups)
                self.groups.append(_Group(self.g.nested))
                self.i = i + 2
                while self.i < len(src) and len(self.groups) > depth:
                    self._step()
                i = self.i
                continue
            i += 2 if src[i] == "\\" else 1
        self.i = i + 1
        self._term(field_chain=False)

    def _ident(self) -> None:
        src = self.src
        m = _IDENT.match(src, self.i)
        assert m is not None
        name, self.i = m.group(0), m.end()
        g = self.g
        rest = src[self.i :].lstrip()
        if g.is_object and g.key_position:
            if rest[:1] in (",", "}"):
                self._read(name, m.start())  # `{id, version}` reads `.version`
            return
        if name == "has" and rest.startswith("("):
            s = _STRING.match(rest[1:].lstrip())
            if s:
                at = src.find('"', self.i) + 1
                self._read(s.group(1), at)
        self._term(field_chain=False)

    def _chain(self, var_rooted: bool) -> None:
        """`.a`, `.a.b`, `."a"`, `.["a"]`, `.[]`, `.[0]`, `.a?` — report its first field."""
        src = self.src
        if src.startswith("..", self.i) and not var_rooted:
            self.i += 2
            self._term(field_chain=True)  # recursive descent: nothing after it is a top-level read
            return
        first: tuple[str, int] | None = None
        went_into_field = False
        while self.i < len(src):
            c = src[self.i]
            if c == "." and not src.startswith("..", self.i):
                self.i += 1
                name = self._field_name()
                if name is not None:
                    if first is None and not went_into_field:
                        first = name
                    went_into_field = True
            elif c == "[":
                name = self._bracket()
                if name is not None:
                    if first is None and not went_into_field:
                        first = name
                    went_into_field = True
            elif c == "?":
                self.i += 1
            else:
                break
        if first is not None and not var_rooted:
            self._read(*first)
        self._term(field_chain=went_into_field)

    def _field_name(self) -> tuple[str, int] | None:
        src = self.src
        m = _IDENT.match(src, self.i)
        if m:
            self.i = m.end()
            return m.group(0), m.start()
        s = _STRING.match(src, self.i)
        if s:
            self.i = s.end()
            return s.group(1), s.start() + 1
        return None

    def _bracket(self) -> tuple[str, int] | None:
        """`["name"]` is a field; any other `[...]` (index, slice, iteration) is skipped."""
        src = self.src
        s = re.compile(r'\[\s*"((?:[^"\\]|\\.)*)"\s*\]').match(src, self.i)
        if s:
            self.i = s.end()
            return s.group(1), s.start(1)
        depth = 0
        while self.i < len(src):
            c = src[self.i]
            depth += 1 if c == "[" else -1 if c == "]" else 0
            self.i += 1
            if depth == 0:
                break
        return None

    def _read(self, name: str, offset: int) -> None:
        if self.g.nested:
            return
        after = _CMP_AFTER.match(self.src, self.i)
        before = _CMP_BEFORE.search(self.src, 0, offset - 1 if offset else 0)
        compared = tuple(m.group(1) for m in (after, before) if m)
        self.out.append(JqRead(name, offset, compared))


def field_reads(src: str) -> list[JqRead]:
    """The fields of its input that the filter reads, in order."""
    return _Scanner(src).run()
