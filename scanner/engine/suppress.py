"""Inline suppressions: `# sunset: ignore[policy-id] reason`, on the finding's line or the line above.

Grammar (strict; an attempt that does not follow it is an input error naming the line):

    # sunset: ignore[ID(,ID)*]( until=YYYY-MM-DD)?( REASON)?

IDs are policy ids (lowercase, dashes), separated by commas without spaces; the reason is optional
(as ruff's `# noqa`, zizmor and yamllint accept one without), and recommended. After the `until` date
the suppression stops working and the finding says so. A suppression that suppresses nothing is a
warning (`Recorder.finish`).

A suppression is a comment: text that only looks like one — an example in a Python docstring or
string, `"# sunset: ignore[x]"` quoted in YAML or shell — is neither a suppression nor a malformed
one. Python's comments are found by its tokenizer; every other kind sunset reads marks comments with
`#` at the start of a line or after a blank, outside quotes (`comment_column`).
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass
from datetime import date

# What looks like an attempt at a suppression (and is then held to the grammar): `# sunset:`
# followed by `ignore`, or by any word and `[`. Prose such as `# sunset: scans this repo` is not.
_MARKER = re.compile(r"#\s*sunset:\s*(?:ignore\b|[A-Za-z-]+\s*\[)")
_GRAMMAR = re.compile(
    r"#\s*sunset: ignore\[(?P<ids>[a-z0-9]+(?:-[a-z0-9]+)*(?:,[a-z0-9]+(?:-[a-z0-9]+)*)*)\]"
    r"(?: until=(?P<until>\S+))?(?: +(?P<reason>\S.*?))?\s*$"
)


@dataclass(frozen=True, slots=True)
class Suppression:
    line: int
    ids: frozenset[str]
    until: date | None
    reason: str


@dataclass(frozen=True, slots=True)
class Problem:
    line: int
    message: str


def comment_column(line: str) -> int | None:
    """Where the line's `#` comment starts: a `#` at the start or after a blank, outside single or
    double quotes opened on the line (a quote after a letter, as in `it's`, opens nothing); None
    when the line has no comment."""
    quote, i = "", 0
    while i < len(line):
        ch = line[i]
        if quote:
            if ch == "\\" and quote == '"':
                i += 1  # `\"` inside double quotes does not close them
            elif ch == quote:
                quote = ""
        elif ch in "'\"" and (i == 0 or not line[i - 1].isalnum()):
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1] in " \t"):
            return i
        i += 1
    return None


def python_comments(text: str) -> dict[int, int] | None:
    """Line → column of the comment on it, from Python's tokenizer; None when it cannot tokenize, or
    numbers lines otherwise than `str.splitlines` does (a form feed or a lone carriage return)."""
    if len(text.splitlines()) != text.count("\n") + (not text.endswith("\n")):
        return None
    found: dict[int, int] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                found[tok.start[0]] = tok.start[1]
    except (tokenize.TokenError, SyntaxError, RecursionError, MemoryError):
        return None
    return found


def parse_line(text: str, line: int, known: frozenset[str], comment: int | None = -1) -> Suppression | Problem | None:
    """The suppression written on one source line, a problem with it, or None if there is none.
    `comment`: where the line's comment starts (None: it has none); by default found by `comment_column`."""
    start = comment_column(text) if comment == -1 else comment
    marker = _MARKER.search(text, start) if start is not None else None
    if marker is None:
        return None
    m = _GRAMMAR.match(text, marker.start())
    if m is None:
        return Problem(line, "malformed suppression; expected `# sunset: ignore[policy-id] reason`")
    ids = frozenset(m["ids"].split(","))
    unknown = sorted(ids - known)
    if unknown:
        return Problem(line, f"suppression names unknown policy {unknown[0]!r}")
    until = None
    if m["until"] is not None:
        try:
            until = date.fromisoformat(m["until"]) if re.fullmatch(r"\d{4}-\d{2}-\d{2}", m["until"]) else None
        except ValueError:
            until = None
        if until is None:
            return Problem(line, f"suppression has an invalid date {m['until']!r}; use until=YYYY-MM-DD")
    return Suppression(line, ids, until, m["reason"] or "")


@dataclass(slots=True)
class Suppressions:
    """The suppressions of one file, by line."""

    by_line: dict[int, Suppression]
    problems: list[Problem]

    @classmethod
    def scan(cls, text: str, known: frozenset[str], kind: str = "") -> Suppressions:
        """`kind`: the document kind; a `python-source` file's comments come from its tokenizer."""
        found = cls({}, [])
        if "sunset:" not in text:
            return found
        comments = python_comments(text) if kind == "python-source" else None
        for number, line in enumerate(text.splitlines(), start=1):
            if "sunset:" not in line:
                continue
            column = comments.get(number) if comments is not None else -1
            parsed = parse_line(line, number, known, column)
            if isinstance(parsed, Suppression):
                found.by_line[number] = parsed
            elif isinstance(parsed, Problem):
                found.problems.append(parsed)
        return found

    def lookup(self, policy_id: str, line: int) -> Suppression | None:
        """The suppression covering a finding of `policy_id` on `line` (same line, or the line above)."""
        for at in (line, line - 1):
            s = self.by_line.get(at)
            if s is not None and policy_id in s.ids:
                return s
        return None
