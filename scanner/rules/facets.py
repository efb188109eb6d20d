"""What each kind of document carries that matchers can read: its facets.

A policy that does not name its document kinds (`applies_to`) applies to every kind carrying a
facet its matcher reads (`scanner.rules.table.RULE_KINDS`): REST policies reach every reader
that extracts REST calls, so a new language is a reader, its recognition, one row in
`scanner.engine.kinds.KINDS` and one row here — no policy file changes. The order is the
order kinds are tried when recognising a file (`scanner.engine.kinds`).
"""

from __future__ import annotations

from collections.abc import Iterable

_CI = ("ci-includes", "ci-variables", "ci-jobs", "tree", "scripts", "text")
_SETTINGS = ("tree", "settings-tree", "settings-env")
_SOURCE = ("rest-calls", "graphql-documents", "text")

DOCUMENT_FACETS: dict[str, frozenset[str]] = {
    "gitlab-ci": frozenset(_CI),
    "shell-script": frozenset({"scripts", "text"}),
    "python-source": frozenset(_SOURCE),
    "graphql": frozenset({"graphql-documents"}),
    "js-source": frozenset(_SOURCE),
    # Terraform resources stand for a few REST calls only (`gitlab_runner`, …): the policies on
    # those endpoints name it in `applies_to`.
    "terraform": frozenset({"terraform-resources", "text"}),
    # GitLab's own YAML files read by jsonpath policies that name them (a policy project's
    # `.gitlab/security-policies/*.yml`, an agent's `.gitlab/agents/<name>/config.yaml`).
    "security-policy": frozenset({"tree"}),
    "agent-config": frozenset({"tree"}),
    "omnibus-config": frozenset(_SETTINGS),
    "gitlab-yml": frozenset(_SETTINGS),
    "database-yml": frozenset(_SETTINGS),
    "runner-config": frozenset(_SETTINGS),
    "registry-config": frozenset(_SETTINGS),
    "helm-values": frozenset(_SETTINGS),
    "compose": frozenset((*_SETTINGS, "settings-commands")),
    "dockerfile": frozenset((*_SETTINGS, "settings-commands")),
    "env-file": frozenset(_SETTINGS),
    "k8s-manifest": frozenset((*_SETTINGS, "settings-commands")),
    # read by jsonpath policies that name them: `sbt.version`, a Maven wrapper's `distributionUrl`,
    # a rule's `expr`
    "java-properties": frozenset({"tree"}),
    "prometheus-rules": frozenset({"tree"}),
    "text-file": frozenset({"text"}),  # `*.csproj`, `Godeps/Godeps.json`, `*.html`: read as text only
    "ruby-source": frozenset(_SOURCE),
}
KIND_NAMES: tuple[str, ...] = tuple(DOCUMENT_FACETS)


def derived_kinds(facets: frozenset[str]) -> tuple[str, ...]:
    """The document kinds carrying any of these facets, in table order."""
    return tuple(name for name, carried in DOCUMENT_FACETS.items() if carried & facets)


def check_kind_names(names: Iterable[str]) -> None:
    """A policy's `applies_to` and `.sunset.yml`'s `kinds:` name document kinds that exist."""
    unknown = [name for name in names if name not in DOCUMENT_FACETS]
    if unknown:
        raise ValueError(f"unknown document kind {unknown[0]!r}; known: {', '.join(KIND_NAMES)}")
