"""The policy JSONPath is evaluated by sunset's own walk over plain data (scanner/rules/jsonpath.py);
it must find exactly what jsonpath-ng finds — the same places, in the same order, the same objects."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from jsonpath_ng.jsonpath import Child, Fields, Index
from jsonpath_ng.parser import parse

from scanner.core.tree import Tagged
from scanner.rules.jsonpath import _plan_of, _walk


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


KEYS = st.sampled_from(["a", "b", "image", "name", "*", "1", 1, True])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from(["a", "x", ""]))
DATA = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, max_size=4),
                            inner.map(lambda v: Tagged("!reference", v))),
    max_leaves=25,
)
STEP = st.sampled_from([".a", ".b", ".image", ".name", ".*", "[*]", "[0]", "[-1]", "[1]", "[0,1]", "[1:]",
                        "[::2]", "[:-1]", ".a,b", ".image,name"])
FILTER = st.sampled_from(["a", "image", "a.b", "*", "$.a", "`this`", "[0]"])


@st.composite
def paths(draw: st.DrawFn) -> str:
    text = "$" + "".join(draw(st.lists(STEP, min_size=1, max_size=4)))
    if draw(st.booleans()):
        text = f"{text} {draw(st.sampled_from(['where', 'wherenot']))} {draw(FILTER)}"
        if draw(st.booleans()):
            text = f"({text}).{draw(st.sampled_from(['a', 'name', '*']))}"
    return text


@given(paths(), DATA)
def test_the_walk_finds_what_jsonpath_ng_finds(text: str, root: Any) -> None:
    _same(text, root)


def test_forms_the_catalog_writes() -> None:
    root = {"build": {"image": {"name": "ruby:3"}, "script": ["a", "b"], "tags": ["x"]},
            ".hidden": {"image": "alpine"}, "runners": {"a": {"machine": {"OffPeakPeriods": ["* *"]}}},
            "variables": {"X": "1"}, "list": [{"a": 1}, {"b": 2}], 1: "int key", "spec": None}
    for text in ["$.*.image", "$.*.image.name", "$.*.script[*]", "$.runners.*.machine.OffPeakPeriods,OffPeakTimezone",
                 "$.list[*] where a", "$.list[*] wherenot a", "$.*", "$.list[1]", "$.list[-1]", "$.*.tags[0]",
                 "$.spec.containers[*]", "$.*.script[1:]"]:
        _same(text, root)
    assert _ours("$.*.image.name", root) == [((0, "build", "image", "name"), "ruby:3")]
    assert _ours("$.list[*] wherenot a", root) == [((0, "list", 1), {"b": 2})]
