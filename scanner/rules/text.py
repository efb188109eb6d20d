"""`text`: a regular expression over a file's text, for what no reader extracts as structure —
a URL in a string (`/oauth/authorize?…response_type=token`, `https://gitlab.example.com/-/jwks`),
an event name a script filters on, a `<TargetFramework>` in a `.csproj`. Source files, shell
scripts, CI files and the files sunset reads only as text (`text-file`) carry the `text` facet. A
match is reported at its exact span; a match across lines is shown by its first line. A match on a
line that is a comment (`#` or `//` first) is not reported: nothing runs it (a link in a header
comment of `gitlab.rb` is documentation). `condition` names what the file alone cannot show (a
finding "If …", at most a warning).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from scanner.rules import spec
from scanner.rules.hits import Hit
from scanner.rules.kind import MatcherKind
from scanner.rules.policy import Policy

if TYPE_CHECKING:
    from scanner.rules.facets import Facets


class Spec(spec.Spec):
    regex: str  # searched in the file's text; each match is a finding at its span
    condition: str | None = None  # as on `jsonpath`: what the file alone cannot show ("If …", a warning)


@dataclass(frozen=True, slots=True)
class TextMatcher(spec.Matcher):
    kind: ClassVar[str] = "text"
    regex: spec.Regex
    condition: str = ""


def compile(s: Spec, build: spec.Build) -> TextMatcher:
    regex = spec.compile_regex(s.regex)
    if regex.search(""):
        raise ValueError(f"regex: {s.regex!r} matches the empty text")
    return TextMatcher(regex, s.condition or "")


def evaluate(entries: Iterable[tuple[Policy, TextMatcher]], facets: Facets) -> Iterator[Hit]:
    """Each distinct regular expression runs once over the text, for every policy that shares it;
    places come from the document's one line index (`scanner.core.lines`)."""
    text = facets.doc.text
    index = facets.doc.line_index
    by_regex: dict[spec.Regex, list[tuple[Policy, TextMatcher]]] = {}
    for policy, m in entries:
        by_regex.setdefault(m.regex, []).append((policy, m))
    for regex, same in by_regex.items():
        for found in regex.finditer(text):
            start = found.start()
            if text[index.line_start(start) : start].lstrip().startswith(("#", "//")):
                continue  # a comment line: nothing runs it
            span = (*index.position(start), *index.position(found.end()))
            for policy, m in same:
                yield Hit(policy, (0,), "value", found.group(0), span, m.condition)


KIND = MatcherKind(Spec, TextMatcher, compile, {"text": evaluate})
