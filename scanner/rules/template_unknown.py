"""`template-unknown`: `include: template: X` naming no template GitLab ships, or one it deleted.

The names come from `policies/ci/ci-template-names.yml` (GitLab's `lib/gitlab/ci/templates`, with
what is known of each one's removal) and are resolved as GitLab resolves them: the name itself,
then under `Pages/`, `Verify/`, `autodeploy/` and `Security/` (the Free edition looks in `Security/`
only for `SAST.gitlab-ci.yml`; Enterprise Edition, which GitLab.com runs, for every name: sunset
follows EE so that `DAST.gitlab-ci.yml`, written in GitLab's own docs for years, is not reported).
A name with a variable in it is not judged, nor one a `template-include` policy of the catalog
names (the built-in ones for the templates GitLab deleted, or a user's own): that policy reports
it. The other removed templates are reported here with their release. An
unknown name gets the closest known names as "did you mean". Reads the CI includes.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from scanner.readers import ci
from scanner.rules import spec
from scanner.rules.hits import Hit
from scanner.rules.kind import Entries, MatcherKind, Peers
from scanner.rules.policy import Policy

if TYPE_CHECKING:
    from scanner.rules.facets import Facets

SUFFIX = ".gitlab-ci.yml"
_STEM = re.compile(r"(?:\.gitlab-ci)?\.ya?ml$")
CATEGORIES = ("", "Pages/", "Verify/", "autodeploy/", "Security/")
DATA = Path(__file__).resolve().parents[1] / "policies" / "ci" / "ci-template-names.yml"


@dataclass(frozen=True, slots=True)
class Template:
    name: str
    removed_in: str | None = None
    policy: str | None = None
    added: str | None = None


@dataclass(frozen=True, slots=True)
class TemplateUnknownMatcher(spec.Matcher):
    kind: ClassVar[str] = "template-unknown"


def compile(s: spec.Spec, build: spec.Build) -> TemplateUnknownMatcher:
    return TemplateUnknownMatcher()


def _template(raw: Any) -> Template:
    if isinstance(raw, str):
        return Template(raw)
    return Template(str(raw["name"]), raw.get("removed_in"), raw.get("policy"), raw.get("added"))


@cache
def known(path: Path = DATA) -> dict[str, Template]:
    """Every template name GitLab has shipped, by name (read once)."""
    from ruamel.yaml import YAML

    data = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
    return {t.name: t for t in map(_template, data["templates"])}


def resolve(name: str, templates: dict[str, Template]) -> Template | None:
    """The template GitLab would read for `include: template: name`, or None."""
    for category in CATEGORIES:
        if (found := templates.get(category + name)) is not None:
            return found
    return None


def suggestions(name: str, templates: dict[str, Template]) -> list[str]:
    """Known names close to `name` (a typo, a wrong folder, a missing or wrong suffix)."""
    current = {_STEM.sub("", t.name): t.name for t in templates.values() if t.removed_in is None}
    stem = _STEM.sub("", name)
    base = stem.rsplit("/", 1)[-1].lower()
    same_base = [n for s, n in current.items() if s.rsplit("/", 1)[-1].lower() == base]
    close = [current[s] for s in difflib.get_close_matches(stem, list(current), n=3, cutoff=0.8)]
    return (same_base or close)[:3]


def detail(name: str, templates: dict[str, Template]) -> str | None:
    """What is wrong with the name, or None when GitLab resolves it to a template it still ships
    (or one whose removal another policy reports)."""
    if "$" in name:
        return None
    found = resolve(name, templates) if name.endswith(SUFFIX) else None
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
    named: frozenset[str]  # the template names the `template-include` policies report themselves


def grouped(entries: Entries, peers: Peers) -> Group:
    named = frozenset(name for _, m in peers("template-include") for name in m.templates)
    return Group(tuple(policy for policy, _ in entries), named)


def evaluate(group: Group, facets: Facets) -> Iterator[Hit]:
    for entry in ci.include_entries(facets.doc):
        if entry.kind != "template" or entry.target in group.named:
            continue
        if (said := detail(entry.target, known())) is not None:  # the names file is read at the first template
            for policy in group.policies:
                yield Hit(policy, entry.route, "value", entry.target, detail=said)


KIND = MatcherKind(spec.Spec, TemplateUnknownMatcher, compile, {"ci-includes": evaluate}, grouped)
