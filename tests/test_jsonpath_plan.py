"""The policy JSONPath is evaluated by sunset's own walk over plain data (scanner/rules/jsonpath.py);
it must find exactly what jsonpath-ng finds — the same places, in the same order, the same objects."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from jsonpath_ng.jsonpath import Child, Fields, Index
from jsonpath_ng.parser import parse

from scanner.core.tree import Tagged
from scanner.rules.jsonpath import _plan_of, _walk

from conftest import examples


def _route(path: Any) -> tuple[Any, ...]:
    """The route jsonpath-ng's full path names (fields and indices, in order)."""
    if isinstance(path, Child):
        return _route(path.left) + _route(path.right)
    if isinstance(path, Fields):
        return tuple(path.fields)
    if isinstance(path, Index):
        return tuple(path.indices[:1])
    return ()


def _theirs(text: str, root: Any) -> list[tuple[tuple[Any, ...], Any]]:
    return [((0,) + _route(m.full_path), m.value) for m in parse(text).find(root)]


def _ours(text: str, root: Any) -> list[tuple[tuple[Any, ...], Any]]:
    return _walk(_plan_of(parse(text)), root, [((0,), root)])


def _same(text: str, root: Any) -> None:
    theirs, ours = _theirs(text, root), _ours(text, root)
    assert [r for r, _ in ours] == [r for r, _ in theirs], text
    assert all(a is b for (_, a), (_, b) in zip(ours, theirs, strict=True)), text


KEYS = st.sampled_from(["a", "image", "*", 1, True])  # few, so that paths often lead somewhere
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from(["a", "x", ""]))
DATA = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, max_size=4),
                            inner.map(lambda v: Tagged("!reference", v)),
                            # a mapping that is not a dict: looked up with `.get`, as jsonpath-ng does
                            st.dictionaries(KEYS, inner, max_size=3).map(MappingProxyType)),
    max_leaves=25,
)
FILTER = st.sampled_from(["a", "image", "a.image", "*", "$.a", "`this`", "[0]"])


GENERIC_STEPS = [".*", "[*]", "[1:]", "[::2]", "[:-1]", "[-1]", "[0,1]", ".a,image", ".missing"]


@st.composite
def documents_and_paths(draw: st.DrawFn) -> tuple[Any, str]:
    """A document, and a path that mostly follows what is in it (a key it has, an index in range, a
    wildcard or slice), so that most examples find something; some steps lead nowhere."""
    root = draw(st.dictionaries(KEYS, DATA, min_size=1, max_size=4))
    text, value = "$", root
    for _ in range(draw(st.integers(1, 4))):
        inner = value.value if isinstance(value, Tagged) else value
        present: list[str] = []
        if isinstance(inner, Mapping):
            present = [f".{k}" for k in inner if isinstance(k, str) and k.isidentifier()]
        elif isinstance(inner, list):
            present = [f"[{i}]" for i in range(len(inner))]
        step = draw(st.sampled_from(present * 3 + GENERIC_STEPS))
        text += step
        name, index = step[1:], step[1:-1]
        if step.startswith(".") and isinstance(inner, Mapping) and name in inner:
            value = inner[name]
        elif index.isdigit() and isinstance(inner, list) and int(index) < len(inner):
            value = inner[int(index)]
        else:
            children = list(inner.values()) if isinstance(inner, Mapping) else inner if isinstance(inner, list) else []
            value = children[0] if children else None
    if draw(st.sampled_from([False, False, False, True])):
        text = f"{text} {draw(st.sampled_from(['where', 'wherenot']))} {draw(FILTER)}"
        if draw(st.booleans()):
            text = f"({text}).{draw(st.sampled_from(['a', 'image', '*']))}"
    return root, text


@settings(max_examples=examples(500))
@given(documents_and_paths())
def test_the_walk_finds_what_jsonpath_ng_finds(case: tuple[Any, str]) -> None:
    root, text = case
    _same(text, root)


def test_forms_the_catalog_writes() -> None:
    root = {"build": {"image": {"name": "ruby:3"}, "script": ["a", "b"], "tags": ["x"]},
            ".hidden": {"image": "alpine"}, "runners": {"a": {"machine": {"OffPeakPeriods": ["* *"]}}},
            "variables": {"X": "1"}, "list": [{"a": 1}, {"b": 2}, {"a": 3}], 1: "int key", "spec": None}
    for text in ["$.*.image", "$.*.image.name", "$.*.script[*]", "$.runners.*.machine.OffPeakPeriods,OffPeakTimezone",
                 "$.list[*] where a", "$.list[*] wherenot a", "$.*", "$.list[1]", "$.list[-1]", "$.*.tags[0]",
                 "$.spec.containers[*]", "$.*.script[1:]", "$.list[::2]", "$.list[0,2]", "$.list[-1:]", "$.list[::-1]"]:
        _same(text, root)
    assert [r for r, _ in _ours("$.list[::2]", root)] == [(0, "list", 0), (0, "list", 2)]
    assert [r for r, _ in _ours("$.list[2,0]", root)] == [(0, "list", 2), (0, "list", 0)]
    assert _ours("$.*.image.name", root) == [((0, "build", "image", "name"), "ruby:3")]
    # a mapping that is not a dict, and a tagged value (`!reference`), as jsonpath-ng reads them
    other = {"a": MappingProxyType({"image": {"name": "x"}, 1: "one"}), "b": Tagged("!reference", {"image": 1})}
    for text in ["$.a.image", "$.a.*", "$.*.image.name", "$.b.image", "$.b.*", "$.a[*]"]:
        _same(text, other)
    assert _ours("$.a.*", other) == [((0, "a", "image"), {"name": "x"}), ((0, "a", 1), "one")]
    assert _ours("$.list[*] wherenot a", root) == [((0, "list", 1), {"b": 2})]
