"""`template-include`: `include: template: X` naming a template GitLab removed or renamed, or (with
`unless_set`) one whose behaviour changed where the file does not set a variable that decides it
(`CS_SEVERITY_THRESHOLD` next to Container Scanning); `if_set` narrows that to files setting a variable
that shows the old behaviour is relied on (`POSTGRES_DB` with Auto DevOps). Both the policy's names and
the file's are resolved as GitLab resolves them (`scanner.rules.ci_templates`), so
`License-Scanning.gitlab-ci.yml` is `Security/License-Scanning.gitlab-ci.yml`. Reads the CI includes
and variable blocks."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from scanner.core.document import Document
from scanner.readers import ci
from scanner.rules import spec
from scanner.rules.ci_templates import canonical
from scanner.rules.hits import Hit
from scanner.rules.kind import Entries, MatcherKind, Peers
from scanner.rules.policy import Policy

if TYPE_CHECKING:
    from scanner.rules.facets import Facets


class Spec(spec.Spec):
    templates: tuple[str, ...] = spec.field(min_length=1)
    unless_set: tuple[str, ...] = ()  # variables that, set anywhere in the file, settle it (no finding)
    if_set: tuple[str, ...] = ()  # when given, only files setting one of these variables are reported


@dataclass(frozen=True, slots=True)
class TemplateIncludeMatcher(spec.Matcher):
    kind: ClassVar[str] = "template-include"
    templates: frozenset[str]
    unless_set: frozenset[str] = frozenset()  # any of these variables set in the file: no finding
    if_set: frozenset[str] = frozenset()  # when given, one of these must be set in the file


def compile(s: Spec, build: spec.Build) -> TemplateIncludeMatcher:
    return TemplateIncludeMatcher(frozenset(s.templates), frozenset(s.unless_set), frozenset(s.if_set))


Entry = tuple[Policy, TemplateIncludeMatcher]


class Lookup:
    """The policies by the template they name, each name resolved as GitLab resolves it — on the first
    template include a scan meets, so that scans without one never read GitLab's list of names."""

    def __init__(self, entries: Iterable[Entry]) -> None:
        self.written = list(entries)
        self._by_name: dict[str, list[Entry]] | None = None

    def __bool__(self) -> bool:
        return bool(self.written)

    def _names(self) -> dict[str, list[Entry]]:
        if self._by_name is None:
            found: dict[str, list[Entry]] = defaultdict(list)
            for policy, m in self.written:
                for name in m.templates:
                    found[canonical(name)].append((policy, m))
            self._by_name = dict(found)
        return self._by_name

    def get(self, name: str) -> list[Entry]:
        """The policies naming the template GitLab reads for `name` (resolved by the caller)."""
        return self._names().get(name, [])

    def __contains__(self, name: object) -> bool:
        return name in self._names()


def by_template(entries: Entries, peers: Peers) -> Lookup:
    return Lookup(entries)


def evaluate(templates: Lookup, facets: Facets) -> Iterator[Hit]:
    doc = facets.doc
    for entry in ci.include_entries(doc):
        if entry.kind != "template":
            continue
        name = canonical(entry.target)
        read = f"GitLab reads it as `{name}`." if name != entry.target else ""
        for policy, m in templates.get(name):
            if m.unless_set and _sets_any(doc, m.unless_set) or m.if_set and not _sets_any(doc, m.if_set):
                continue
            yield Hit(policy, entry.route, "value", entry.target, detail=read)


def _sets_any(doc: Document, names: frozenset[str]) -> bool:
    return any(names & block.keys() for _, block in ci.variable_blocks(doc))


KIND = MatcherKind(Spec, TemplateIncludeMatcher, compile, {"ci-includes": evaluate}, by_template)
