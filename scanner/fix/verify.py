"""Is a rewritten file still valid, and changed only as the fixes intend?

1. The document kind's own parser (the one `sunset scan` uses) must read the new text, with no
   more unreadable statements than before.
2. The data is loaded from the old and the new text: YAML with ruamel.yaml's round-trip loader,
   TOML with `tomllib` (when the original loads that way; templated files fall back to the kind's
   parser), anything else with the kind's parser. Each fix's `Expect` is applied to the old data
   (a key renamed, an entry deleted, a key moved first, words of a scalar replaced), and the
   result must equal the new data, key order included.

A route that reaches a string before its end (TOML embedded in a YAML string, a script) is
checked as a string: both sides are compared with the fixed words masked.
"""

from __future__ import annotations

import copy
import math
import re
import tomllib
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from scanner.core.document import Document
from scanner.core.tree import ParseError, Tagged, unwrap
from scanner.fix.plan import Expect
from scanner.rules.documents import KINDS

YAML_KINDS = frozenset(
    {"gitlab-ci", "gitlab-yml", "database-yml", "registry-config", "helm-values", "compose", "k8s-manifest"}
)
_MASK = "\0"


class Unverified(Exception):
    """Why a rewritten text is refused."""


def _plain(node: Any, memo: dict[int, Any]) -> Any:
    """ruamel round-trip data as plain dicts, lists and scalars (shared values stay shared)."""
    if id(node) in memo:
        return memo[id(node)]
    if isinstance(node, dict):
        out: dict[Any, Any] = {}
        memo[id(node)] = out
        for key in node:
            out[_plain(key, memo)] = _plain(node[key], memo)
        return out
    if isinstance(node, list):
        items: list[Any] = []
        memo[id(node)] = items
        items.extend(_plain(item, memo) for item in node)
        return items
    for base in (bool, int, float, str):
        if isinstance(node, base):
            return base(node)
    value = getattr(node, "value", node)  # a tagged scalar
    return value if value is node else _plain(value, memo)


def _load_yaml(text: str) -> list[Any]:
    try:
        return [_plain(doc, {}) for doc in YAML(typ="rt", pure=True).load_all(text)]
    except YAMLError as exc:
        raise Unverified(f"the result is not valid YAML: {str(exc).splitlines()[0]}") from None


def _load_toml(text: str) -> list[Any]:
    try:
        return [tomllib.loads(text)]
    except tomllib.TOMLDecodeError as exc:
        raise Unverified(f"the result is not valid TOML: {exc}") from None


# The original's data per document, loaded once however many fixes a file gets.
_ORIGINALS: weakref.WeakKeyDictionary[Document, tuple[Callable[[str], list[Any]] | None, list[Any]]] = (
    weakref.WeakKeyDictionary()
)


def _original(doc: Document) -> tuple[Callable[[str], list[Any]] | None, list[Any]]:
    """The strict loader for this kind and the original's data (loaded once per document); no loader
    when the kind has none or it cannot read the original (templated YAML: ERB, `{{VAR}}`), and then
    the data the kind's parser read."""
    if doc not in _ORIGINALS:
        strict = _load_yaml if doc.kind in YAML_KINDS else _load_toml if doc.kind == "runner-config" else None
        try:
            _ORIGINALS[doc] = (strict, strict(doc.text)) if strict else (None, doc.data.roots)
        except Unverified:
            _ORIGINALS[doc] = (None, doc.data.roots)
    loader, data = _ORIGINALS[doc]
    return loader, copy.deepcopy(data)


def _parse(doc: Document, text: str) -> list[Any]:
    """The new text read as the scan reads it: by the document's kind, or, for a document written
    inside another (a compose file's GITLAB_OMNIBUS_CONFIG), by the file's kind, then the same
    embedded document."""
    kind, index, warnings = doc.host or (doc.kind, -1, len(doc.data.warnings))
    try:
        tree = KINDS[kind].parse(text)
    except ParseError as exc:
        where = f" (line {exc.line})" if exc.line else ""
        raise Unverified(f"the result does not parse: {exc.message}{where}") from None
    if len(tree.warnings) > warnings:
        line, message = tree.warnings[-1]
        if message.startswith("invalid YAML"):  # read past it (scanner.readers.yamlrepair), yet broken
            raise Unverified(f"the result does not parse: {message.split(' (line')[0]} (line {line})")
        raise Unverified(f"the result has a statement sunset cannot read (line {line}: {message})")
    if index < 0:
        return tree.roots
    if index >= len(tree.embedded) or tree.embedded[index][0] != doc.kind:
        raise Unverified(f"the result no longer holds the embedded {doc.kind} document")
    return tree.embedded[index][1].roots


def verify(doc: Document, text: str, expects: list[Expect]) -> None:
    """Raise `Unverified` unless `text` parses and differs from the document only as `expects` say."""
    after_kind = _parse(doc, text)
    strict, before = _original(doc)
    after = strict(text) if strict else after_kind
    places = [_place(before, after, e) for e in expects]  # resolved before anything moves
    words: dict[tuple[int, Any], tuple[_Place, set[str]]] = {}
    for place, expect in zip(places, expects, strict=True):
        if place.textual:
            entry = words.setdefault((id(place.parent_b), place.step), (place, set()))
            entry[1].update(w for pair in expect.pairs for w in pair if w)
        else:
            _restructure(place, expect)
    for place, fixed in words.values():
        _mask(place, fixed)
    if not _same(before, after, set()):
        raise Unverified("the parsed data changed in a way the fix does not intend")


@dataclass(frozen=True, slots=True)
class _Place:
    parent_b: Any  # the container holding the fixed place, in the old data and in the new
    parent_a: Any
    step: Any
    textual: bool  # words of a string are replaced (the route reached a string)


def _place(before: list[Any], after: list[Any], expect: Expect) -> _Place:
    parent_b, parent_a, steps = before, after, list(expect.route)
    while len(steps) > 1 and not isinstance(_get(parent_b, steps[0]), str):
        parent_b, parent_a = unwrap(_get(parent_b, steps[0])), unwrap(_get(parent_a, steps[0]))
        steps.pop(0)
    at_string = isinstance(_get(parent_b, steps[0]), str)
    textual = at_string and (expect.op == "in-text" or (expect.op == "rename-key" and len(steps) > 1))
    if not textual and (len(steps) > 1 or expect.op == "in-text"):
        raise Unverified(f"cannot check the fix at {expect.route!r}")
    return _Place(parent_b, parent_a, steps[0], textual)


def _restructure(place: _Place, expect: Expect) -> None:
    """Change the old data as a structural fix says: rename a key, delete an entry, move one first."""
    parent, step = unwrap(place.parent_b), place.step
    if expect.op == "rename-key" and isinstance(parent, dict):
        old, new = expect.pairs[0]
        _reorder(parent, [(new if k == old else k, v) for k, v in parent.items()])
    elif expect.op == "delete":
        _get(parent, step)
        del parent[step]
    elif expect.op == "move-first" and isinstance(_get(parent, step), dict):
        mapping, key = _get(parent, step), expect.pairs[0][0]
        _reorder(mapping, [(key, mapping[key])] + [(k, v) for k, v in mapping.items() if k != key])
    else:
        raise Unverified(f"cannot check the fix at {expect.route!r}")


def _reorder(mapping: dict[Any, Any], items: list[tuple[Any, Any]]) -> None:
    mapping.clear()
    mapping.update(items)


def _get(container: Any, step: Any) -> Any:
    try:
        return unwrap(container)[step]
    except (KeyError, IndexError, TypeError):
        raise Unverified(f"the fixed place ({step!r}) is not in the parsed data") from None


def _mask(place: _Place, words: set[str]) -> None:
    """Replace the fixed words by a mask in the old and the new string, which must then be equal."""
    old, new = _get(place.parent_b, place.step), _get(place.parent_a, place.step)
    if not isinstance(new, str) or old == new:
        raise Unverified("the fixed text did not change as intended")
    pattern = re.compile("|".join(map(re.escape, sorted(words, key=len, reverse=True))))
    unwrap(place.parent_b)[place.step] = pattern.sub(_MASK, old)
    unwrap(place.parent_a)[place.step] = pattern.sub(_MASK, new)


def _same(a: Any, b: Any, seen: set[tuple[int, int]]) -> bool:
    """Equal data, mapping key order included; shared values are compared once."""
    if isinstance(a, dict | list) and isinstance(b, dict | list):
        if (id(a), id(b)) in seen:
            return True
        seen.add((id(a), id(b)))
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(_same(a[k], b[k], seen) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y, seen) for x, y in zip(a, b, strict=True))
    if isinstance(a, Tagged) and isinstance(b, Tagged):
        return a.tag == b.tag and _same(a.value, b.value, seen)
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return bool(type(a) is type(b) and a == b)
