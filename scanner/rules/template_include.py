"""`template-include`: `include: template: X` naming a template GitLab removed or renamed. Reads the CI includes."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from scanner.core.document import Document
from scanner.readers import ci
from scanner.rules import spec
from scanner.rules.hits import Hit
from scanner.rules.policy import Policy

if TYPE_CHECKING:
    from scanner.rules import schema


@dataclass(frozen=True, slots=True)
class TemplateIncludeMatcher(spec.Matcher):
    kind: ClassVar[str] = "template-include"
    templates: frozenset[str]


def compile(s: schema.TemplateIncludeSpec, build: spec.Build) -> TemplateIncludeMatcher:
    return TemplateIncludeMatcher(frozenset(s.templates))


def by_template(entries: Iterable[tuple[Policy, TemplateIncludeMatcher]]) -> dict[str, list[Policy]]:
    found: dict[str, list[Policy]] = defaultdict(list)
    for policy, m in entries:
        for name in m.templates:
            found[name].append(policy)
    return found


def evaluate(templates: dict[str, list[Policy]], doc: Document) -> Iterator[Hit]:
    if not templates:
        return
    for entry in ci.include_entries(doc):
        if entry.kind == "template":
            for policy in templates.get(entry.target, ()):
                yield Hit(policy, entry.route, "value", entry.target)
