"""YAML read past its broken lines: one broken spot is one problem naming its line, and the rest of the
file is still read, at its own positions.

`read_yaml` is `scanner.readers.yamldoc.load_yaml` for text that parses. For text that does not, the
broken spot is blanked — its characters become spaces, so every later line and column stays where it
was — and the text is parsed again, until it parses:

* the spot starts on the line libyaml names: the problem's line, or, when the problem only shows
  after the spot (a quoted scalar never closed, a simple key without its `:`, a flow collection), the
  line the context names;
* it takes the lines below it indented deeper than it (its children, the rest of a flow collection),
  so one mis-indented `- { name: 'cas3', … }` item is one problem, not one per line;
* characters YAML does not allow at all (control characters) become spaces, one problem for all;
* a list item whose `-` is one or more columns off its list's (`       - { name: 'authentiq', … }`
  under items at six spaces) is moved onto the list's column instead, the spaces after its `-`
  taking up the difference so that the rest of the line keeps its columns: the item is read, and a
  notice (`Tree.notices`, not a problem) names the line. Only where the list is certain: the error's
  context starts on the list's first item (or on the item before, for a `-` pushed into that item's
  mapping), and no other list begins between it and the item. When the moved item still does not
  fit, it is put back and blanked like any other spot.

Spots next to each other are one problem. The repairs are bounded: after `MAX_REPAIRS` (fewer for a
long text, so that reading stays linear) the rest of the file from the next error is not read, and
that is said once. Nesting deeper than the limit is never repaired (the file is refused, as before).
Broken text is located with libyaml (GitLab's parser is libyaml too); `load_yaml` gives the final tree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from scanner.core.tree import Tree
from scanner.readers.yamldoc import YamlError, load_fast, load_yaml

MAX_REPAIRS = 16
REPAIR_BUDGET = 4_000_000  # characters parsed again in all, at most: a long broken file gets fewer repairs
_BREAK = re.compile("\r\n|\r|\n")  # the line model's line ends (`scanner.core.lines`): YamlError's lines
# Characters libyaml refuses anywhere (YAML 1.1 "printable" is everything else; a BOM is allowed).
_UNPRINTABLE = re.compile("[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
# Contexts whose problem shows only after the broken spot: the spot starts at the context's line.
_STARTS_AT_CONTEXT = ("while scanning a quoted scalar", "while scanning a simple key", "while parsing a flow",
                      "while scanning a block scalar", "while scanning an anchor", "while scanning an alias",
                      "while scanning a tag", "while scanning a directive")
_NOT_REPAIRED = "nested deeper than"
# libyaml's words for a list item off its list's column: among the items, or where the item before
# it holds a mapping (the `-` then stands where a key of that mapping was expected)
_ITEM_OFF = {"while parsing a block collection": "did not find expected '-' indicator",
             "while parsing a block mapping": "did not find expected key"}
_ITEM = re.compile(r"-( +|(?=[\r\n]|$))")
_WHOLE = "\0"  # marks a problem whose message says all (no "line N not read")


@dataclass(slots=True)
class _Text:
    """The text being repaired, as a list of lines (each with its line break) blanked in place."""

    lines: list[str]

    @classmethod
    def of(cls, text: str) -> _Text:
        lines, start = [], 0
        for m in _BREAK.finditer(text):
            lines.append(text[start : m.end()])
            start = m.end()
        lines.append(text[start:])
        return cls(lines)

    def text(self) -> str:
        return "".join(self.lines)

    def blank_line(self, n: int) -> bool:
        """Blank line n (0-based); whether it held anything."""
        line = self.lines[n]
        body = line.rstrip("\r\n")
        if not body.strip():
            return False
        self.lines[n] = " " * len(body) + line[len(body) :]
        return True

    def indent(self, n: int) -> int | None:
        """Line n's indentation; None for a blank or comment-only line."""
        body = self.lines[n].rstrip("\r\n\x85\u2028\u2029")
        stripped = body.lstrip(" ")
        return None if not stripped.strip() or stripped.startswith("#") else len(body) - len(stripped)

    def spot(self, first: int) -> int:
        """The last line of the spot starting at `first`: the lines below it indented deeper."""
        own = self.indent(first)
        last = first
        if own is None:
            return last
        for n in range(first + 1, len(self.lines)):
            depth = self.indent(n)
            if depth is None:
                continue
            if depth <= own:
                break
            last = n
        return last


def read_yaml(text: str) -> Tree:
    """Every document in `text`, broken spots blanked and each said once in `Tree.warnings`."""
    try:
        return load_yaml(text)
    except YamlError as exc:
        if _NOT_REPAIRED in exc.message:
            raise
        first = exc
    lines = _Text.of(text)
    problems: list[tuple[int, int, str]] = []  # first line, last line (1-based), what libyaml said
    repairs = max(1, min(MAX_REPAIRS, REPAIR_BUDGET // max(1, len(text))))
    rest_from: int | None = None  # too many spots: from this line on, nothing is read
    moved: dict[int, tuple[str, str]] = {}  # items moved onto their list's column: line (0-based) → (was, notice)
    undo: int | None = None  # the item moved by the last attempt, put back if it still does not fit
    tried: set[int] = set()  # lines whose item was moved once: never again
    _blank_unprintable(lines, text, problems)
    attempt = 0
    while attempt < repairs + 2:
        try:
            tree = load_fast(lines.text())
        except YamlError as exc:
            if _NOT_REPAIRED in exc.message or exc.line is None or exc.line > len(lines.lines) or rest_from:
                raise first from None
            if undo is not None and exc.line == undo + 1:
                lines.lines[undo] = moved.pop(undo)[0]
                undo = None
                continue  # the same error again, now blanked as a spot
            undo = _move_item(lines, exc, moved, tried) if len(tried) < repairs else None
            if undo is not None:
                continue
            span = _repair(lines, exc, attempt == repairs)
            if span is None:
                raise first from None
            rest_from = span[0] if attempt == repairs else None
            _add(problems, span[0], span[1], exc.message)
            attempt += 1
            continue
        tree.warnings[:0] = [(a, m.removesuffix(_WHOLE) if m.endswith(_WHOLE) else f"{m} ({_lines(a, b, rest_from)})")
                             for a, b, m in problems]
        tree.notices[:0] = [(n + 1, notice) for n, (_, notice) in sorted(moved.items())
                            if not any(a <= n + 1 <= b for a, b, _ in problems)]  # a spot blanked after all
        return tree
    raise first from None  # pragma: no cover - the last repair blanks the rest of the file


def _move_item(lines: _Text, exc: YamlError, moved: dict[int, tuple[str, str]], tried: set[int]) -> int | None:
    """Move the list item on the error's line onto the column of its list's items (the list starts on
    the context's line), keeping the line's length; the line (0-based), or None when this error is no
    item off its list's column or the move cannot keep the rest of the line in place."""
    words = next((w for c, w in _ITEM_OFF.items() if exc.context.startswith(c)), None)
    if words is None or words not in exc.message or not exc.context_line:
        return None
    at, start = (exc.line or 0) - 1, exc.context_line - 1
    if at in tried or not 0 <= start < at:
        return None
    own, column = lines.indent(at), lines.indent(start)
    line = lines.lines[at]
    if own is None or column is None or own == column or not _ITEM.match(lines.lines[start], column):
        return None
    item = _ITEM.match(line, own)
    mapping = words == _ITEM_OFF["while parsing a block mapping"]
    if item is None or (mapping and own < column) or any(_other_list(lines, n, column) for n in range(start + 1, at)):
        return None
    after = own + 1 + len(item.group(1))  # the item's content keeps this column
    if after - column - 1 < 1 and line[after:].strip():
        return None  # no room for the `-` and a space before the content
    tried.add(at)
    lines.lines[at] = " " * column + "-" + " " * (after - column - 1) + line[after:]
    moved[at] = (line, f"YAML: the list item on line {at + 1} has its `-` at column {own + 1}, its list's at "
                       f"column {column + 1} (line {start + 1}); read as an item of that list")
    return at


def _blank_unprintable(lines: _Text, text: str, problems: list[tuple[int, int, str]]) -> None:
    """Characters YAML refuses anywhere become spaces; one problem for all of them."""
    found = [m.start() for m in _UNPRINTABLE.finditer(text)]
    if not found:
        return
    starts = [0]
    for line in lines.lines[:-1]:
        starts.append(starts[-1] + len(line))
    at, first = 0, None
    for offset in found:
        while at + 1 < len(starts) and starts[at + 1] <= offset:
            at += 1
        first = at + 1 if first is None else first
        text_of = lines.lines[at]
        i = offset - starts[at]
        lines.lines[at] = text_of[:i] + " " + text_of[i + 1 :]
    said = f"invalid YAML: {len(found)} control character(s), read as spaces"
    problems.append((first or 1, first or 1, said + _WHOLE))


def _other_list(lines: _Text, n: int, column: int) -> bool:
    """Whether line n is a list item off `column`: another list, to which the item may belong."""
    depth = lines.indent(n)
    return depth is not None and depth != column and _ITEM.match(lines.lines[n], depth) is not None


def _repair(lines: _Text, exc: YamlError, rest: bool) -> tuple[int, int] | None:
    """Blank the spot the error names; its first and last line (1-based), or None when nothing changed."""
    start = exc.line or 1
    if exc.context_line is not None and exc.context.startswith(_STARTS_AT_CONTEXT) and exc.context_line <= start:
        start = exc.context_line
    first = start - 1
    last = len(lines.lines) - 1 if rest else lines.spot(first)
    changed = False
    for n in range(first, last + 1):
        changed = lines.blank_line(n) or changed
    if not changed and (exc.line or 1) - 1 != first:  # the context's line was blank already: the problem's
        first = last = (exc.line or 1) - 1
        changed = lines.blank_line(first)
    return (first + 1, last + 1) if changed else None


def _add(problems: list[tuple[int, int, str]], first: int, last: int, said: str) -> None:
    """A spot touching or overlapping the one before is the same broken spot."""
    for i, (a, b, m) in enumerate(problems):
        if first <= b + 1 and last >= a - 1:
            problems[i] = (min(a, first), max(b, last), m)
            return
    problems.append((first, last, said))
    problems.sort()


def _lines(first: int, last: int, rest_from: int | None) -> str:
    if rest_from is not None and last >= rest_from:
        return f"too many broken spots: line {first} and the rest of the file not read"
    return f"line {first} not read" if first == last else f"lines {first}–{last} not read"
