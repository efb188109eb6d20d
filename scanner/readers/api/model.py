"""The records every API extractor produces, whatever language the call was written in, and the
document a source file is read into (its text: the extractors read it when the file is evaluated)."""

from __future__ import annotations

from dataclasses import dataclass, field

from scanner.core.tree import Span, Tree

Pos = tuple[int, int]  # 1-based line, column


class _Unknown:
    """A value the source does not spell out (a variable, an expression, a file)."""

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN = _Unknown()


@dataclass(frozen=True, slots=True)
class Param:
    """A request field: form field, query parameter or JSON body key."""

    name: str
    span: Span
    value: object = UNKNOWN  # str, bool, int, None (JSON null / Python None) or UNKNOWN


@dataclass(frozen=True, slots=True)
class Read:
    """A field of the response that the code reads, and the string literals it compares it with."""

    field: str
    span: Span
    compared: tuple[str, ...] = ()


@dataclass(slots=True)
class RestCall:
    """One call to the REST API: `path` is what follows `/api/v4`, with the caller's own
    segments (`$RUNNER_ID`, `:id`, `123`) kept as written; `span` is where the path is written."""

    method: str
    path: str
    span: Span
    params: list[Param] = field(default_factory=list)
    reads: list[Read] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class GraphqlText:
    """A GraphQL document and the source position of each of its characters; without
    `positions` the text is a whole file and offsets map through its lines. `variables`: the key
    paths of the JSON variables sent with it (`input`, `input.active`), where the request shows them."""

    text: str
    positions: tuple[Pos, ...] = ()
    variables: tuple[str, ...] = ()

    def span(self, offset: int, length: int) -> Span:
        if self.positions:
            line, col = self.positions[min(offset, len(self.positions) - 1)]
        else:
            line, col = offset_pos(line_starts(self.text), offset)
        return (line, col, line, col + length)


def text_tree(text: str) -> Tree:
    """A source file's document: its text, spanning the whole file. JavaScript, TypeScript, Terraform
    and Ruby are parsed this way alone (their extractors never fail)."""
    return Tree(roots=[text], root_spans=[(1, 1, text.count("\n") + 1, 1)])


def line_starts(text: str) -> list[int]:
    """Offsets at which each line of `text` starts."""
    starts = [0]
    pos = text.find("\n")
    while pos >= 0:
        starts.append(pos + 1)
        pos = text.find("\n", pos + 1)
    return starts


def offset_pos(starts: list[int], offset: int) -> Pos:
    """Offset in a text → (line, column), given the text's line starts."""
    lo, hi = 0, len(starts) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if starts[mid] <= offset:
            lo = mid
        else:
            hi = mid - 1
    return lo + 1, offset - starts[lo] + 1


@dataclass(frozen=True, slots=True)
class GqlField:
    """A field selected in a GraphQL document, where its type is known."""

    name: str
    offset: int  # of the field's name in the document text
    parents: tuple[str, ...]  # field names from the operation or fragment root
    on: str | None  # type of the selection set: operation root or fragment type condition
    arguments: tuple[tuple[str, int], ...]  # argument paths (`input.direction`) and offsets of their names
    # literal values written for arguments: (path, enum value or string, offset of the value itself);
    # a list gives one entry per item
    values: tuple[tuple[str, str, int], ...] = ()
