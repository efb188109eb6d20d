"""GraphQL documents parsed with graphql-core: every selected field, its parents, its type where
the document says it (operation root, fragment and inline-fragment type conditions), its
arguments, each with the offset of its name, and the literal values written for them (enum values
and strings, each item of a list); and the named type of every declared `$variable`. A `.graphql`
file must parse (`parse_graphql`); GraphQL text found in other languages is read leniently.

This module imports graphql-core; import it only where a GraphQL document is parsed.
"""

from __future__ import annotations

from typing import Any

from graphql import GraphQLError, parse
from graphql.language import (
    ArgumentNode,
    EnumValueNode,
    FieldNode,
    FragmentDefinitionNode,
    InlineFragmentNode,
    ListTypeNode,
    ListValueNode,
    NonNullTypeNode,
    ObjectValueNode,
    OperationDefinitionNode,
    SelectionSetNode,
    StringValueNode,
    TypeNode,
    ValueNode,
    VariableNode,
)

from scanner.core.tree import ParseError, Tree
from scanner.readers.api.model import GqlField, text_tree

MAX_TOKENS = 100_000  # graphql-core stops parsing past this; a document that large is not a query
_ROOTS = {"query": "Query", "mutation": "Mutation", "subscription": "Subscription"}


def parse_graphql(text: str) -> Tree:
    """The parse step of a `.graphql` file: it must be GraphQL, or it is an input error."""
    check(text)
    return text_tree(text)


def check(text: str) -> None:
    """Raise `ParseError` (with line and column) when `text` is not a GraphQL document."""
    _parse(text, strict=True)


def _parse(text: str, strict: bool) -> Any:
    try:
        return parse(text, max_tokens=MAX_TOKENS)
    except GraphQLError as exc:
        if not strict:
            return None
        where = exc.locations[0] if exc.locations else None
        raise ParseError(f"invalid GraphQL: {exc.message}", where.line if where else None,
                         where.column if where else None) from None


def selected_fields(text: str, strict: bool = False, variables: tuple[str, ...] = ()) -> list[GqlField]:
    """Every field selection in the document; [] when the text is not GraphQL (unless `strict`)."""
    return read(text, strict, variables)[0]


def read(text: str, strict: bool = False,
         variables: tuple[str, ...] = ()) -> tuple[list[GqlField], list[tuple[str, int]]]:
    """Every field selection in the document, and every variable declaration's named type with the
    offset of that name (`$m: [RunnerMembershipFilter!]` gives `RunnerMembershipFilter`); both
    empty when the text is not GraphQL (unless `strict`).

    An argument given as `$name` gains the keys the request's variables hold under `name`
    (`input: $input` with `{"input": {"active": false}}` is the argument `input.active`), at
    the offset of `$name`.
    """
    doc = _parse(text, strict)
    if doc is None:
        return [], []
    out: list[GqlField] = []
    types: list[tuple[str, int]] = []
    for definition in doc.definitions:
        if isinstance(definition, OperationDefinitionNode):
            for declared in definition.variable_definitions or ():
                named = _named(declared.type)
                types.append((named.name.value, _start(named)))
            _walk(definition.selection_set, (), _ROOTS.get(definition.operation.value), variables, out)
        elif isinstance(definition, FragmentDefinitionNode):
            _walk(definition.selection_set, (), definition.type_condition.name.value, variables, out)
    return out, types


def _named(node: TypeNode) -> Any:
    while isinstance(node, (ListTypeNode, NonNullTypeNode)):
        node = node.type
    return node


def _walk(selections: SelectionSetNode | None, parents: tuple[str, ...], on: str | None,
          variables: tuple[str, ...], out: list[GqlField]) -> None:
    if selections is None:
        return
    for node in selections.selections:
        if isinstance(node, FieldNode):
            args: list[tuple[str, int]] = []
            values: list[tuple[str, str, int]] = []
            for arg in node.arguments or ():
                _arguments(arg, "", variables, args, values)
            out.append(GqlField(node.name.value, _start(node.name), parents, on, tuple(args), tuple(values)))
            _walk(node.selection_set, (*parents, node.name.value), None, variables, out)
        elif isinstance(node, InlineFragmentNode):
            _walk(node.selection_set, parents, node.type_condition.name.value if node.type_condition else on,
                  variables, out)


def _arguments(node: ArgumentNode | Any, prefix: str, variables: tuple[str, ...], out: list[tuple[str, int]],
               values: list[tuple[str, str, int]]) -> None:
    path = prefix + node.name.value
    out.append((path, _start(node.name)))
    value: ValueNode = node.value
    if isinstance(value, ObjectValueNode):
        for child in value.fields:
            _arguments(child, path + ".", variables, out, values)
    elif isinstance(value, VariableNode) and variables:
        name = value.name.value + "."
        out.extend((path + "." + key[len(name):], _start(value)) for key in variables if key.startswith(name))
    else:
        for item in value.values if isinstance(value, ListValueNode) else (value,):
            if isinstance(item, EnumValueNode):
                values.append((path, item.value, _start(item)))
            elif isinstance(item, StringValueNode) and not item.block:
                values.append((path, item.value, _start(item) + 1))  # past the opening quote


def _start(node: Any) -> int:
    return int(node.loc.start) if node.loc is not None else 0
