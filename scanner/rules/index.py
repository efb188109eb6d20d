"""The policies that apply to one kind of document, grouped by matcher kind once per scan.

Each matcher kind is kept where it is cheap to skip: template and variable names in dicts, the
literal keys a JSONPath needs beside it, and one prefilter regex over script text built from the
words the script matchers name (`Matcher.script_words`). A document pays for a policy only when the
thing the policy looks for is present.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from scanner.core.document import Document
from scanner.rules import ci_variable, jsonpath, rest_api, template_include, variable_reference
from scanner.rules.any_of import leaves
from scanner.rules.policy import Policy

_API_KINDS = ("rest-api", "graphql")
_API_ANCHORS = re.compile(r"api/v4|CI_API_V4_URL|api/graphql|CI_API_GRAPHQL_URL|glab|/tags/reference/")


class PolicyIndex:
    def __init__(self, policies: list[Policy]) -> None:
        self.entries: dict[str, list[tuple[Policy, Any]]] = defaultdict(list)
        words: set[str] = set()
        for policy in policies:
            for m in leaves(policy.matcher):
                self.entries[m.kind].append((policy, m))
                if m.kind not in _API_KINDS:
                    words.update(m.script_words())
        self.templates = template_include.by_template(self.of("template-include"))
        self.variables = ci_variable.by_name(self.of("ci-variable"))
        self.references = variable_reference.lookup(self.of("variable-reference"))
        self.jsonpaths = jsonpath.grouped(self.of("jsonpath"))
        self.api = bool(self.entries.get("rest-api") or self.entries.get("graphql"))
        self.prefilter = _alternation(words)
        # API words (curl, jq, …) are common; they only matter in a document that names GitLab's API
        self.prefilter_api = _alternation(words | set(rest_api.API_WORDS) if self.api else words)

    def of(self, kind: str) -> list[tuple[Policy, Any]]:
        """The (policy, matcher) pairs of one matcher kind, `any-of` members included."""
        return self.entries.get(kind, [])

    def script_filter(self, doc: Document) -> re.Pattern[str] | None:
        """The prefilter for this document's script items: with the API words only where it can call the API."""
        return self.prefilter_api if self.api and api_possible(doc) else self.prefilter


def _alternation(words: set[str]) -> re.Pattern[str] | None:
    alternatives = "|".join(sorted(map(re.escape, words), key=len, reverse=True))
    return re.compile(alternatives) if alternatives else None


def api_possible(doc: Document) -> bool:
    """A shell call is only recognised as GitLab's API through one of these words in the same file."""
    return _API_ANCHORS.search(doc.text) is not None
