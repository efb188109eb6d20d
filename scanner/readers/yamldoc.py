"""YAML with positions: ruamel's C composer, turned into plain data plus a side table.

The node graph from `compose_all` shares one node for an anchor and all its aliases;
conversion is memoised by node identity, so an alias bomb costs what its source costs
and a value written once has one position, wherever it is referenced. Merge keys (`<<`)
build a new mapping that shares (never copies) the merged values. Custom tags such as
GitLab's `!reference [.job, script]` become `Tagged` values, never a parse failure.

Positions live beside the data, never inside it (see `scanner.core.tree`): `Tree.table[id(container)]` holds, for
a mapping, `{key: (key_span, value_span)}` and, for a sequence, a list of value spans.
"""

from __future__ import annotations

import re
import sys
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from ruamel.yaml.resolver import VersionedResolver
from ruamel.yaml.tag import Tag

from scanner.core.lines import LineIndex
from scanner.core.tree import ParseError, Span, Tagged, Tree
from scanner.readers.yamldepth import too_deep

# GitLab's own default for `max_yaml_depth` (gitlab-org/gitlab!68593).
MAX_DEPTH = 100

_STD = "tag:yaml.org,2002:"
_TRUE = frozenset({"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"})


class YamlError(ParseError):
    """YAML that cannot be read; `context` and `context_line` are libyaml's ("while scanning a quoted
    scalar", where it started), when it gives them; `offset` is where the problem is in the text."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None, context: str = "",
                 context_line: int | None = None, offset: int | None = None) -> None:
        super().__init__(message, line, column)
        self.context = context
        self.context_line = context_line
        self.offset = offset


# libyaml ends a line at NEL, U+2028 and U+2029 too; the line model (`scanner.core.lines`) does not, so a
# text holding one takes its positions from the marks' offsets instead of their lines.
_OTHER_BREAKS = ("\x85", "\u2028", "\u2029")


def _at(lines: LineIndex, mark: Any) -> tuple[int, int]:
    return lines.position(int(mark.index))


def _span(node: Node) -> Span:
    s, e = node.start_mark, node.end_mark
    return (s.line + 1, s.column + 1, e.line + 1, e.column + 1)


_TAGS = {k: Tag(suffix=_STD + k) for k in ("str", "null", "bool", "int", "float", "seq", "map", "merge")}
# YAML 1.1 implicit types, as GitLab's parser (Ruby's Psych) reads them.
_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_BOOL = re.compile(r"^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$")
_INT = re.compile(r"^[-+]?(?:0|[1-9][0-9_]*|0x[0-9a-fA-F_]+|0o?[0-7_]+|0b[01_]+)$")
_FLOAT = re.compile(
    r"^[-+]?(?:[0-9][0-9_]*)?\.[0-9_]*(?:[eE][-+]?[0-9]+)?$|^[-+]?\.(?:inf|Inf|INF)$|^\.(?:nan|NaN|NAN)$"
)
_MAYBE = frozenset("~nNyYtTfFoO0123456789+-.")


class _FastResolver(VersionedResolver):
    """Implicit scalar types in one regex per candidate; ruamel's versioned lookup costs more than parsing."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is ScalarNode:
            if implicit[0] and value == "<<":
                return _TAGS["merge"]
            if implicit[0] and (not value or value[0] in _MAYBE):
                if _NULL.match(value):
                    return _TAGS["null"]
                if _BOOL.match(value):
                    return _TAGS["bool"]
                if _INT.match(value):
                    return _TAGS["int"]
                if _FLOAT.match(value):
                    return _TAGS["float"]
            return _TAGS["str"]
        return _TAGS["seq"] if kind is SequenceNode else _TAGS["map"]


_STR_TAG, _MERGE_TAG, _STD_TAGS = _TAGS["str"], _TAGS["merge"], frozenset(map(id, _TAGS.values()))


def _scalar(node: ScalarNode) -> Any:
    ctag, text = node.ctag, node.value
    if ctag is _STR_TAG:
        return text
    tag = str(ctag)
    if not tag.startswith(_STD):
        return Tagged(tag, text)
    kind = tag[len(_STD):]
    if kind == "str":
        return text
    if kind == "null":
        return None
    if kind == "bool":
        return text in _TRUE
    if kind == "int":
        try:
            return int(text.replace("_", ""), 0)
        except ValueError:
            return text
    if kind == "float":
        try:
            return float(text.replace("_", ""))
        except ValueError:
            return text
    return text


class _Converter:
    def __init__(self, doc: Tree, restore: bool = False, lines: LineIndex | None = None) -> None:
        self.doc = doc
        self.memo: dict[int, Any] = {}
        self.restore = restore  # the text had flow-scalar colons replaced (see `load_yaml`)
        self.lines = lines  # set when libyaml's lines are not the line model's (`_OTHER_BREAKS`)

    def span(self, node: Node) -> Span:
        if self.lines is None:
            return _span(node)
        return _at(self.lines, node.start_mark) + _at(self.lines, node.end_mark)

    def position(self, mark: Any) -> tuple[int, int]:
        return (mark.line + 1, mark.column + 1) if self.lines is None else _at(self.lines, mark)

    def value(self, node: Node, depth: int) -> Any:
        hit = self.memo.get(id(node))
        if hit is not None or id(node) in self.memo:
            return hit
        if depth > MAX_DEPTH:
            raise YamlError(f"document is nested deeper than {MAX_DEPTH} levels", *self.position(node.start_mark))
        if isinstance(node, ScalarNode):
            out: Any = _scalar(node)
            if self.restore and isinstance(out, str):
                out = out.replace(_COLON_STANDIN, ":")
        elif isinstance(node, SequenceNode):
            out = self._sequence(node, depth)
        elif isinstance(node, MappingNode):
            out = self._mapping(node, depth)
        else:  # pragma: no cover - the composer yields only these three
            raise YamlError(f"unexpected YAML node {type(node).__name__}")
        if id(node.ctag) not in _STD_TAGS and not isinstance(node, ScalarNode):
            tag = str(node.tag)
            if not tag.startswith(_STD):
                out = Tagged(tag, out)
        self.memo[id(node)] = out
        return out

    def _sequence(self, node: SequenceNode, depth: int) -> list[Any]:
        items: list[Any] = []
        spans: list[Span] = []
        self.memo[id(node)] = items  # a self-referencing alias resolves to the list itself
        for child in node.value:
            items.append(self.value(child, depth + 1))
            spans.append(self.span(child))
        self.doc.table[id(items)] = spans
        return items

    def _mapping(self, node: MappingNode, depth: int) -> dict[str, Any]:
        data: dict[str, Any] = {}
        spans: dict[str, tuple[Span, Span]] = {}
        self.memo[id(node)] = data
        merged: list[tuple[dict[str, Any], dict[str, tuple[Span, Span]]]] = []
        keys = self.doc.keys
        for knode, vnode in node.value:
            if knode.ctag is _MERGE_TAG:
                merged.extend(self._merge_sources(knode, vnode, depth))
                continue
            key = knode.value if isinstance(knode, ScalarNode) else _flow_key(knode)
            if self.restore:
                key = key.replace(_COLON_STANDIN, ":")
            data[key] = self.value(vnode, depth + 1)
            spans[key] = (self.span(knode), self.span(vnode))
            keys.add(key)
        for source, source_spans in merged:  # explicit keys win; earlier merge sources win
            for key, value in source.items():
                if key not in data:
                    data[key] = value
                    spans[key] = source_spans[key]
        self.doc.table[id(data)] = spans
        return data

    def _merge_sources(
        self, knode: Node, vnode: Node, depth: int
    ) -> list[tuple[dict[str, Any], dict[str, tuple[Span, Span]]]]:
        nodes = vnode.value if isinstance(vnode, SequenceNode) else [vnode]
        out = []
        for n in nodes:
            value = self.value(n, depth + 1)
            if not isinstance(value, dict):
                mark = n.start_mark
                raise YamlError("a merge key (<<) must refer to a mapping", *self.position(mark))
            spans = self.doc.table.get(id(value))
            if spans is None:  # `&x {<<: *x}`: the mapping is still being read
                mark = knode.start_mark
                raise YamlError("a merge key (<<) refers to the mapping it is in", *self.position(mark))
            out.append((value, spans))
        return out


def _flow_key(node: Node) -> str:
    """A complex (non-scalar) key, kept as readable text."""
    if isinstance(node, SequenceNode):
        return "[" + ", ".join(_flow_key(n) for n in node.value) + "]"
    if isinstance(node, MappingNode):
        return "{" + ", ".join(f"{_flow_key(k)}: {_flow_key(v)}" for k, v in node.value) + "}"
    return str(node.value)


_FAST = YAML(typ="safe", pure=False)
_FAST.Resolver = _FastResolver
_SLOW = YAML(typ="safe", pure=True)
_SLOW.Resolver = _FastResolver
# libyaml (the C parser) rejects a colon inside a plain scalar in a flow collection, such as
# `needs: [validate:terraform]`, which GitLab's parser accepts. Such a colon is swapped for a
# private-use character of the same length (positions unchanged), parsed in C, and swapped
# back in the values; anything else libyaml rejects goes to the pure-Python composer, which
# is ~15x slower but reads all of YAML 1.2 and gives the error message if the text is invalid.
_COLON_STANDIN = "\ue000"
_MAX_STANDINS = 64


def load_yaml(text: str, name: str = "<string>") -> Tree:
    """Parse every document in `text`; raise `YamlError` with a 1-based position."""
    try:
        return load_fast(text)
    except YamlError as exc:
        if not exc.message.startswith("invalid YAML"):
            raise
    return _load(text, _SLOW)


def load_fast(text: str) -> Tree:
    """`load_yaml` with libyaml alone (GitLab's parser too): its error where the pure composer might
    read on. Flow-scalar colons are accepted as `load_yaml` accepts them."""
    patched = text
    for _ in range(_MAX_STANDINS):
        try:
            return _load(patched, _FAST, restore=patched is not text)
        except YamlError as exc:
            offset = _flow_colon(patched, exc) if exc.message.startswith("invalid YAML") else None
            if offset is None:
                raise
            patched = patched[:offset] + _COLON_STANDIN + patched[offset + 1 :]
    return _load(patched, _FAST, restore=True)


def _flow_colon(text: str, exc: YamlError) -> int | None:
    """The offset of the colon libyaml refused inside a flow scalar, if that was the error."""
    if not exc.message.endswith("found unexpected ':'") or exc.offset is None:
        return None
    offset = exc.offset
    after = text[offset + 1 : offset + 2]
    return offset if text[offset : offset + 1] == ":" and after not in ("", " ", "\t", "\n") else None


def _load(text: str, parser: YAML, restore: bool = False) -> Tree:
    deep = too_deep(text, parser, MAX_DEPTH, 10 * MAX_DEPTH)  # before the C composer, which recurses per level
    if deep is not None:
        raise YamlError(f"document is nested deeper than {MAX_DEPTH} levels", *LineIndex(text).position(deep))
    doc = Tree(roots=[], root_spans=[])
    # libyaml's own line numbers serve unless they differ from the line model's: other line breaks, or
    # a text without a final line end (libyaml then puts the end of the last node on a line after it)
    model = any(b in text for b in _OTHER_BREAKS) or (text != "" and not text.endswith(("\n", "\r")))
    converter = _Converter(doc, restore, LineIndex(text) if model else None)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 4 * MAX_DEPTH + 200))
    try:
        for node in parser.compose_all(text):
            if node is None:
                continue
            doc.roots.append(converter.value(node, 0))
            doc.root_spans.append(converter.span(node))
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        lines = LineIndex(text)  # the line model's positions, from the marks' offsets
        line, col = _at(lines, mark) if mark is not None else (None, None)
        problem = " ".join(p for p in (exc.context, exc.problem) if p)
        start = _at(lines, exc.context_mark)[0] if exc.context_mark is not None else None
        offset = int(mark.index) if mark is not None else None
        raise YamlError(f"invalid YAML: {problem or exc}", line, col, str(exc.context or ""), start, offset) from None
    except YAMLError as exc:
        raise YamlError(f"invalid YAML: {exc}") from None
    except (ValueError, OverflowError):  # the pure scanner's chr() of an escape past U+10FFFF
        raise YamlError("invalid YAML: an escape past the last code point, U+10FFFF", *_bad_escape(text)) from None
    except RecursionError:
        raise YamlError(f"document is nested deeper than {MAX_DEPTH} levels") from None
    finally:
        sys.setrecursionlimit(limit)
    return doc


def _bad_escape(text: str) -> tuple[int | None, int | None]:
    """The position of the first `\\U` escape past the last code point, U+10FFFF."""
    for m in re.finditer(r"\\U([0-9A-Fa-f]{8})", text):
        if int(m.group(1), 16) > 0x10FFFF:
            return LineIndex(text).position(m.start())
    return None, None
