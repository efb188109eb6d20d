"""The document kinds of API usage in source files: Python, GraphQL documents, JavaScript and
TypeScript, Terraform, Ruby. Each parser checks only what it must (a file that never mentions the API is not
parsed at all); each evaluator runs the API policies on the calls its extractor finds."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING

from scanner.core.document import Document
from scanner.core.tree import ParseError, Tree
from scanner.readers.api import jssource, pysource, rubysource, terraform
from scanner.readers.api.model import GraphqlText, RestCall

if TYPE_CHECKING:
    from scanner.rules.hits import Hit
    from scanner.rules.match import PolicyIndex

def _text_tree(text: str) -> Tree:
    return Tree(roots=[text], root_spans=[(1, 1, text.count("\n") + 1, 1)])


def parse_python(text: str) -> Tree:
    """Python that mentions the API must parse, or the file is reported as an input error."""
    if pysource.PREFILTER.search(text):
        try:
            ast.parse(text)
        except SyntaxError as exc:
            raise ParseError(f"invalid Python: {exc.msg}", exc.lineno, exc.offset) from None
    return _text_tree(text)


def parse_graphql(text: str) -> Tree:
    from scanner.readers.api import gql  # graphql-core only for GraphQL files

    gql.check(text)
    return _text_tree(text)


def parse_text(text: str) -> Tree:
    """JavaScript, TypeScript and Terraform are read by their extractors, which never fail."""
    return _text_tree(text)


def _hits(index: PolicyIndex, uses: list[RestCall | GraphqlText], strict: bool = False) -> Iterator[Hit]:
    from scanner.rules.hits import Hit

    for use in uses:
        for h in index.api.hits(use, strict):
            yield Hit(h.policy, (0,), "value", h.matched, h.span)


def evaluate_python(index: PolicyIndex, doc: Document) -> Iterator[Hit]:
    if index.api:
        yield from _hits(index, pysource.extract(doc.text))


def evaluate_graphql(index: PolicyIndex, doc: Document) -> Iterator[Hit]:
    if index.api.graphql:
        yield from _hits(index, [GraphqlText(doc.text)], strict=True)


def evaluate_js(index: PolicyIndex, doc: Document) -> Iterator[Hit]:
    if index.api:
        yield from _hits(index, jssource.extract(doc.text))


def evaluate_terraform(index: PolicyIndex, doc: Document) -> Iterator[Hit]:
    if index.api:
        yield from _hits(index, list(terraform.extract(doc.text)))


def evaluate_ruby(index: PolicyIndex, doc: Document) -> Iterator[Hit]:
    if index.api:
        yield from _hits(index, rubysource.extract(doc.text))
