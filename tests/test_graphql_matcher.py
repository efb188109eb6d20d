"""The `graphql` matcher on its own: argument values, variable types and fields under a parent path,
read from real GraphQL text (graphql-core parses it) and reported at the exact offset."""

from __future__ import annotations

import pytest

from scanner.readers.api import graphql as gql
from scanner.rules.graphql import GraphqlRule, RuleSpec, rule_hits
from scanner.rules.schema import validated


def _rule(**given: object) -> GraphqlRule:
    spec = validated(RuleSpec, given)
    under = tuple(tuple(u.split(".")) for u in spec.under)
    return GraphqlRule(frozenset(spec.fields), frozenset(spec.on), under, frozenset(spec.arguments),
                       spec.without_argument, frozenset(spec.values), frozenset(spec.variable_types))


def _hits(rule: GraphqlRule, text: str) -> list[tuple[str, str]]:
    """Each hit as (matched, the text at its offset and length), so the position is checked too."""
    return [(m, text[o : o + n]) for f in gql.selected_fields(text) for m, o, n in rule_hits(rule, f)]


def test_literal_values_enum_string_and_list_items_keep_their_offsets() -> None:
    text = 'query { group(fullPath: "a/b") { projects(sort: STORAGE, ids: ["x", "y"]) { nodes { id } } } }'
    projects = next(f for f in gql.selected_fields(text) if f.name == "projects")
    assert [(p, v, text[o : o + len(v)]) for p, v, o in projects.values] == [
        ("sort", "STORAGE", "STORAGE"),
        ("ids", "x", "x"),
        ("ids", "y", "y"),
    ]
    group = next(f for f in gql.selected_fields(text) if f.name == "group")
    assert group.values == (("fullPath", "a/b", text.index("a/b")),)


def test_a_value_is_reported_only_for_the_named_argument_and_value() -> None:
    rule = _rule(fields=["projects"], under=["group", "namespace"], arguments=["sort"], values=["STORAGE"])
    assert _hits(rule, "{ group(fullPath: \"g\") { projects(sort: STORAGE) { count } } }") == [("STORAGE", "STORAGE")]
    assert _hits(rule, "{ namespace(fullPath: \"g\") { projects(sort: STORAGE_SIZE_DESC) { count } } }") == []
    # the same value for another argument, or under another parent, is something else
    assert _hits(rule, "{ group(fullPath: \"g\") { projects(search: \"STORAGE\") { count } } }") == []
    assert _hits(rule, "{ projects(sort: STORAGE) { count } }") == []


def test_values_inside_an_input_object_and_in_a_list() -> None:
    rule = _rule(fields=["groupUpdate"], on=["Mutation"], arguments=["input.sharedRunnersSetting"],
                 values=["DISABLED_WITH_OVERRIDE"])
    text = "mutation { groupUpdate(input: {fullPath: \"g\", sharedRunnersSetting: DISABLED_WITH_OVERRIDE}) { errors } }"
    assert _hits(rule, text) == [("DISABLED_WITH_OVERRIDE", "DISABLED_WITH_OVERRIDE")]
    owasp = _rule(fields=["vulnerabilities"], arguments=["owaspTopTen"], values=["A1_2017", "A3_2017"])
    text = "{ group(fullPath: \"g\") { vulnerabilities(owaspTopTen: [A1_2017, A3_2021, A3_2017]) { count } } }"
    assert _hits(owasp, text) == [("A1_2017", "A1_2017"), ("A3_2017", "A3_2017")]


def test_a_value_passed_as_a_variable_is_not_guessed() -> None:
    rule = _rule(fields=["projects"], arguments=["sort"], values=["STORAGE"])
    text = "query($s: NamespaceProjectSort) { group(fullPath: \"g\") { projects(sort: $s) { count } } }"
    assert _hits(rule, text) == []


def test_variable_types_are_read_through_lists_and_non_null() -> None:
    text = ("query($m: [RunnerMembershipFilter!]!, $id: ID) { a }\n"
            "query Q($n: CiRunnerMembershipFilter) { b }\nfragment F on Group { c }")
    _, types = gql.read(text)
    assert [(name, text[o : o + len(name)]) for name, o in types] == [
        ("RunnerMembershipFilter", "RunnerMembershipFilter"),
        ("ID", "ID"),
        ("CiRunnerMembershipFilter", "CiRunnerMembershipFilter"),
    ]


def test_not_graphql_reads_as_nothing_and_strict_raises() -> None:
    assert gql.read("not { graphql") == ([], [])
    with pytest.raises(Exception, match="invalid GraphQL"):
        gql.read("not { graphql", strict=True)


def test_a_field_under_a_parent_path() -> None:
    rule = _rule(fields=["name"], under=["ciMinutesUsage.nodes.projects.nodes",
                                         "ciMinutesUsage.nodes.projects.edges.node"])
    text = "{ ciMinutesUsage { nodes { name projects { nodes { name project { name } } } } } }"
    hits = _hits(rule, text)
    assert hits == [("name", "name")]
    field = next(f for f in gql.selected_fields(text) if f.name == "name" and f.parents[-1] == "nodes"
                 and f.parents[-2] == "projects")
    assert text.index("projects { nodes { name") + len("projects { nodes { ") == field.offset


@pytest.mark.parametrize(
    ("given", "problem"),
    [
        ({}, "give `fields` or `variable_types`"),
        ({"fields": ["a"], "variable_types": ["B"]}, "give `fields` or `variable_types`"),
        ({"fields": ["a"], "values": ["B"]}, "`values` needs `arguments`"),
    ],
)
def test_bad_rules_are_clear_errors(given: dict[str, object], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        validated(RuleSpec, given)
