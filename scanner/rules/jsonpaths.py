"""Policy JSONPath: parsed once, limited to what can be evaluated fast, with the keys it needs.

Shared by the `jsonpath` matcher and the settings matchers (`implicit-default`, `required-keys`,
`secret-file`).
"""

from __future__ import annotations

from jsonpath_ng.jsonpath import (
    Child,
    Descendants,
    Fields,
    Index,
    JSONPath,
    Root,
    Slice,
    This,
    Where,
    WhereNot,
    Wildcard,
)


def compile_path(text: str) -> tuple[JSONPath, frozenset[str]]:
    """The expression and the literal keys a document must have for it to match anything.
    (The parser is imported here: a scan whose catalog comes from the cache never needs it.)"""
    from jsonpath_ng.parser import parse as jsonpath_parse

    try:
        expr = jsonpath_parse(text)
    except Exception as exc:  # noqa: BLE001 - jsonpath-ng raises bare Exception (and its lexer/parser errors)
        raise ValueError(f"invalid JSONPath {text!r}: {exc}") from None
    return expr, required_keys(expr)


def required_keys(expr: JSONPath) -> frozenset[str]:
    """Literal field names the expression needs; a document lacking any is skipped.

    Recursive descent is refused: on a document built from aliases it walks the
    expanded tree, and it costs milliseconds per expression per file.
    """
    keys: set[str] = set()
    stack: list[JSONPath] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, Descendants):
            raise ValueError("recursive descent ('..') is not allowed in policy JSONPath")
        if isinstance(node, Child):
            stack.extend((node.left, node.right))
        elif isinstance(node, (Where, WhereNot)):
            stack.append(node.left)
        elif isinstance(node, Fields):
            if len(node.fields) == 1:  # `['a','b']` needs one of them, so neither is required
                keys.update(f for f in node.fields if f != "*")
        elif not isinstance(node, (Root, Slice, Index, This, Wildcard)):
            raise ValueError(f"unsupported JSONPath construct {type(node).__name__}")
    return frozenset(keys)
