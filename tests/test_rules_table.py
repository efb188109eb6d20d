"""The matcher kinds' table and the facets policies apply to: exact rows, exact derived kinds."""

from __future__ import annotations

from pathlib import Path

import pytest

from scanner.rules.catalog import PolicyLoadError, builtin_policy_dir, load_policies
from scanner.rules.documents import KINDS, derived_kinds
from scanner.rules.schema import validated
from scanner.rules.table import RULE_KINDS, build_matcher, facets_of

BASE = """\
title: A test policy
summary: s
message: m
rationale: r
remediation: r
breaking: true
origin: gitlab
references: [{title: t, url: "https://docs.gitlab.com/x"}]
example: {before: a, after: b}
"""


def test_the_table_names_every_kind_once() -> None:
    assert list(RULE_KINDS) == [
        "template-include", "template-unknown", "ci-variable", "variable-reference", "jsonpath", "command",
        "job-token-reach", "rest-api", "graphql", "any-of", "implicit-default", "required-keys", "secret-file",
        "text", "unique-values",
    ]
    for name, kind in RULE_KINDS.items():  # each spec takes its own name, and no other
        other = "text" if name != "text" else "jsonpath"
        with pytest.raises(ValueError, match=f"kind: Input should be '{name}'"):
            validated(kind.spec, {"kind": other}, kind=name)


def test_every_facet_is_carried_and_read() -> None:
    """A facet name a document kind carries that no matcher kind reads or applies to (or the other
    way round) is a typo that silently drops policies."""
    carried = {facet for kind in KINDS.values() for facet in kind.facets}
    read = {facet for kind in RULE_KINDS.values() for facet in (*kind.reads, *kind.applies)}
    assert carried == read


@pytest.mark.parametrize(
    ("match", "kinds"),
    [
        ({"kind": "rest-api", "endpoints": ["GET /runners"]},
         ("gitlab-ci", "shell-script", "python-source", "js-source", "ruby-source")),
        ({"kind": "graphql", "rules": [{"fields": ["x"]}]},
         ("gitlab-ci", "shell-script", "python-source", "graphql", "js-source", "ruby-source")),
        ({"kind": "template-include", "templates": ["A.gitlab-ci.yml"]}, ("gitlab-ci",)),
        ({"kind": "text", "regex": "/-/jwks"},
         ("gitlab-ci", "shell-script", "python-source", "js-source", "terraform", "text-file", "ruby-source")),
        ({"kind": "required-keys", "path": "$.production", "keys": ["ci"]},
         ("omnibus-config", "gitlab-yml", "database-yml", "runner-config", "registry-config", "helm-values",
          "compose", "dockerfile", "env-file", "k8s-manifest")),
        ({"kind": "jsonpath", "path": "$.a"},
         ("gitlab-ci", "security-policy", "agent-config", "omnibus-config", "gitlab-yml", "database-yml",
          "runner-config", "registry-config", "helm-values", "compose", "dockerfile", "env-file", "k8s-manifest",
          "java-properties", "prometheus-rules")),
        ({"kind": "any-of", "matchers": [{"kind": "template-include", "templates": ["A"]},
                                         {"kind": "graphql", "rules": [{"fields": ["x"]}]}]},
         ("gitlab-ci", "shell-script", "python-source", "graphql", "js-source", "ruby-source")),
    ],
)
def test_applies_to_is_derived_from_what_the_matcher_reads(match: dict[str, object], kinds: tuple[str, ...]) -> None:
    assert derived_kinds(facets_of(build_matcher(match))) == kinds


def test_a_policy_without_applies_to_gets_the_derived_kinds(tmp_path: Path) -> None:
    (tmp_path / "no-kinds.yaml").write_text(BASE + 'match: {kind: rest-api, endpoints: ["GET /runners"]}\n')
    (tmp_path / "some-kinds.yaml").write_text(
        BASE + 'applies_to: [python-source]\nmatch: {kind: rest-api, endpoints: ["GET /runners"]}\n'
    )
    derived, written = load_policies([tmp_path])
    assert derived.applies_to == ("gitlab-ci", "shell-script", "python-source", "js-source", "ruby-source")
    assert written.applies_to == ("python-source",)


def test_every_shipped_policy_applies_somewhere() -> None:
    empty = [p.id for p in load_policies([builtin_policy_dir()]) if not p.applies_to]
    assert empty == []


@pytest.mark.parametrize(
    ("match", "problem"),
    [
        ("{kind: nope}", "match: kind: unknown or nested matcher kind 'nope'"),
        ("{kind: any-of, matchers: [{kind: any-of, matchers: []}, {kind: jsonpath, path: $.a}]}",
         "match: matchers.0.kind: unknown or nested matcher kind 'any-of'"),
        ("{kind: ci-variable, names: [1x]}", "match: names: not a variable name: '1x'"),
        ("{kind: jsonpath, path: '$..a'}", "match: recursive descent"),
        ("{kind: text, regex: 'x*'}", "match: regex: 'x*' matches the empty text"),
        ("{names: [A]}", "match: Value error, a matcher needs a `kind`"),
    ],
)
def test_bad_matchers_are_reported_on_the_match_line(tmp_path: Path, match: str, problem: str) -> None:
    (tmp_path / "bad.yaml").write_text(BASE + f"match: {match}\n")
    with pytest.raises(PolicyLoadError) as caught:
        load_policies([tmp_path])
    assert str(caught.value).startswith(f"{tmp_path / 'bad.yaml'}:10: {problem}")
