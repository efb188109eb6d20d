"""`template-unknown`: `include: template: X` naming no template GitLab ships, or one it deleted.

Names are resolved as GitLab resolves them (`scanner.rules.ci_templates`: the name itself, then the
category folders; Enterprise Edition's folders, as GitLab.com). A name with a variable in it is not
judged, nor one that resolves to a template a `template-include` policy of the catalog names (the
built-in ones for the templates GitLab deleted, or a user's own): that policy reports it. The other
removed templates are reported here with their release. An unknown name gets the closest known names
as "did you mean". Reads the CI includes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from scanner.readers import ci
from scanner.rules import spec, template_include
from scanner.rules.ci_templates import SUFFIX, Template, canonical, known, resolve, suggestions
from scanner.rules.hits import Hit
from scanner.rules.kind import Entries, MatcherKind, Peers
from scanner.rules.policy import Policy

if TYPE_CHECKING:
    from scanner.rules.facets import Facets


@dataclass(frozen=True, slots=True)
class TemplateUnknownMatcher(spec.Matcher):
    kind: ClassVar[str] = "template-unknown"


def compile(s: spec.Spec, build: spec.Build) -> TemplateUnknownMatcher:
    return TemplateUnknownMatcher()


def detail(name: str, templates: dict[str, Template]) -> str | None:
    """What is wrong with the name, or None when GitLab resolves it to a template it still ships
    (or one whose removal another policy reports)."""
    if "$" in name:
        return None
    found = resolve(name, templates)
    if found is not None:
        if found.removed_in is None or found.policy:
            return None
        return f"GitLab removed `{found.name}` in {found.removed_in}."
    guesses = suggestions(name, templates)
    said = "A template name ends in `.gitlab-ci.yml`. " if not name.endswith(SUFFIX) else ""
    return said + ("Did you mean " + " or ".join(f"`{g}`" for g in guesses) + "?" if guesses else
                   "No CI/CD template of that name.").strip()


@dataclass(frozen=True, slots=True)
class Group:
    policies: tuple[Policy, ...]
    named: template_include.Lookup  # the templates the `template-include` policies report themselves


def grouped(entries: Entries, peers: Peers) -> Group:
    return Group(tuple(policy for policy, _ in entries), template_include.Lookup(peers("template-include")))


def evaluate(group: Group, facets: Facets) -> Iterator[Hit]:
    for entry in ci.include_entries(facets.doc):
        if entry.kind != "template" or canonical(entry.target) in group.named:
            continue
        if (said := detail(entry.target, known())) is not None:  # the names file is read at the first template
            for policy in group.policies:
                yield Hit(policy, entry.route, "value", entry.target, detail=said)


KIND = MatcherKind(spec.Spec, TemplateUnknownMatcher, compile, {"ci-includes": evaluate}, grouped)
