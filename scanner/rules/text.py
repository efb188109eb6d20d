"""`text`: a regular expression over a file's text, for what no reader extracts as structure —
a URL in a string (`/oauth/authorize?…response_type=token`, `https://gitlab.example.com/-/jwks`),
an event name a script filters on, a `<TargetFramework>` in a `.csproj`. Source files, shell
scripts, CI files and the files sunset reads only as text (`text-file`) carry the `text` facet. A
match is reported at its exact span; a match across lines is shown by its first line. A match on a
line that is a comment (`#` or `//` first) is not reported: nothing runs it (a link in a header
comment of `gitlab.rb` is documentation). `condition` names what the file alone cannot show (a
finding "If …", at most a warning).

Patterns are RE2 (`scanner.rules.spec.Regex`: linear time, no lookaround). What a lookahead would
say is written as context: a group named `match` is what a finding reports and the rest of the
pattern must match around it (`(?P<match>…)(?:[^\\w-]|$)`), and `unless` is a pattern that, found
anywhere in a match (context included), leaves that match unreported.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from scanner.rules import spec
from scanner.rules.hits import Hit
from scanner.rules.kind import MatcherKind
from scanner.rules.policy import Policy

if TYPE_CHECKING:
    from scanner.rules.facets import Facets

_COMMENT = re.compile(r"\s*(?:#|//)")  # a line that is a comment, from its start


class Spec(spec.Spec):
    regex: str  # searched in the file's text; each match (its group `match`, if any) is a finding
    unless: str | None = None  # found in a match, context included: that match is not reported
    condition: str | None = None  # as on `jsonpath`: what the file alone cannot show ("If …", a warning)


@dataclass(frozen=True, slots=True)
class TextMatcher(spec.Matcher):
    kind: ClassVar[str] = "text"
    regex: spec.Regex
    condition: str = ""
    unless: spec.Regex | None = None


def compile(s: Spec, build: spec.Build) -> TextMatcher:
    regex = spec.compile_regex(s.regex)
    if regex.search(""):
        raise ValueError(f"regex: {s.regex!r} matches the empty text")
    unless = spec.compile_regex(s.unless, "unless") if s.unless is not None else None
    return TextMatcher(regex, s.condition or "", unless)


def evaluate(entries: Iterable[tuple[Policy, TextMatcher]], facets: Facets) -> Iterator[Hit]:
    """Each distinct regular expression runs once over the text, for every policy that shares it;
    places come from the document's one line index (`scanner.core.lines`)."""
    text = facets.doc.text
    index = facets.doc.line_index
    by_regex: dict[spec.Regex, list[tuple[Policy, TextMatcher]]] = {}
    for policy, m in entries:
        by_regex.setdefault(m.regex, []).append((policy, m))
    comments: dict[int, int] = {}  # line start → where its comment marker ends (-1: not a comment line)
    for regex, same in by_regex.items():
        for start, end, shown, shown_end in regex.finditer(text):
            line_start = index.line_start(shown)
            if line_start not in comments:
                marker = _COMMENT.match(text, line_start)
                comments[line_start] = marker.end() if marker else -1
            if 0 <= comments[line_start] <= shown:
                continue  # a comment line: nothing runs it
            span = (*index.position(shown), *index.position(shown_end))
            for policy, m in same:
                if m.unless is None or not m.unless.search(text[start:end]):
                    yield Hit(policy, (0,), "value", text[shown:shown_end], span, m.condition)


KIND = MatcherKind(Spec, TextMatcher, compile, {"text": evaluate})
