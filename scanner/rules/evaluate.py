"""Policies evaluated over a document's facets, dispatched through the matcher kinds' table.

The policies that apply to one kind of document are grouped once per scan (`PolicyIndex`): each
matcher kind's entries by the kind's own grouping (template and variable names in dicts, policies
reading one JSONPath together), and the words script matchers look for in one prefilter, so that a
document pays for a policy only when what the policy looks for is present. A document is then
evaluated facet by facet, in the order its kind lists them (`scanner.rules.documents.KINDS`), each
facet by the matcher kinds reading it in table order (`scanner.rules.table.RULE_KINDS`). A location
two matchers of one policy reach is reported once, with what the first matched
(`scanner.engine.findings`): this order is part of what a scan reports.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from scanner.core.document import Document
from scanner.rules.any_of import leaves
from scanner.rules.documents import KINDS
from scanner.rules.facets import Facets, api_possible
from scanner.rules.hits import Hit
from scanner.rules.kind import Entries
from scanner.rules.policy import Policy
from scanner.rules.table import RULE_KINDS

Evaluation = Callable[[Any, Facets], Iterable[Hit]]


class PolicyIndex:
    """The policies that apply to one document kind, grouped for evaluation."""

    def __init__(self, policies: list[Policy]) -> None:
        entries: dict[str, Entries] = defaultdict(list)
        for policy in policies:
            for m in leaves(policy.matcher):
                entries[m.kind].append((policy, m))
        self.readers: dict[str, list[tuple[Evaluation, Any]]] = defaultdict(list)
        words: dict[str, set[str]] = defaultdict(set)
        for name, kind in RULE_KINDS.items():
            if name not in entries:
                continue
            group = kind.group(entries[name], lambda other: entries.get(other, []))
            for facet, evaluation in kind.reads.items():
                self.readers[facet].append((evaluation, group))
                words[facet].update(w for _, m in entries[name] for w in m.script_words())
        self.prefilter = _alternation(words["scripts"])
        # API words (curl, jq, …) are common; they only matter in a document that names GitLab's API
        self.calls = bool(self.readers.get("script-calls"))
        self.prefilter_api = _alternation(words["scripts"] | words["script-calls"]) if self.calls else None

    def script_filter(self, doc: Document) -> re.Pattern[str] | None:
        """What a script item must contain to be read: with the API words only where it can call the API."""
        return self.prefilter_api if self.calls and api_possible(doc) else self.prefilter


def _alternation(words: set[str]) -> re.Pattern[str] | None:
    alternatives = "|".join(sorted(map(re.escape, words), key=len, reverse=True))
    return re.compile(alternatives) if alternatives else None


def evaluate(index: PolicyIndex, doc: Document) -> Iterator[Hit]:
    """Every hit of the index's policies in the document, facet by facet."""
    kind = KINDS[doc.kind]
    facets = Facets(doc, kind.scripts, kind.calls, index.script_filter)
    for facet in kind.facets:
        for evaluation, group in index.readers.get(facet, ()):
            yield from evaluation(group, facets)
