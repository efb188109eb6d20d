"""The parse step of the source-file kinds (Python, GraphQL, JavaScript/TypeScript, Terraform, Ruby).

Their readers extract calls from the text when the file is evaluated; parsing only checks what must
hold for that (Python that mentions the API must parse; a `.graphql` file must be GraphQL).
"""

from __future__ import annotations

from scanner.core.tree import Tree
from scanner.readers.api import pysource
from scanner.readers.api.pyparse import parse_module


def _text_tree(text: str) -> Tree:
    return Tree(roots=[text], root_spans=[(1, 1, text.count("\n") + 1, 1)])


def parse_python(text: str) -> Tree:
    """Python that mentions the API must parse, or the file is reported as an input error."""
    if pysource.PREFILTER.search(text):
        parse_module(text)
    return _text_tree(text)


def parse_graphql(text: str) -> Tree:
    from scanner.readers.api import gql  # graphql-core only for GraphQL files

    gql.check(text)
    return _text_tree(text)


def parse_text(text: str) -> Tree:
    """JavaScript, TypeScript, Terraform and Ruby are read by their extractors, which never fail."""
    return _text_tree(text)
