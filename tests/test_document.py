"""A Document is immutable; the views derived from it are cached beside it and go with it."""

from __future__ import annotations

import dataclasses
import gc
import weakref
from pathlib import Path

import pytest

from scanner.core.document import Document
from scanner.readers import ci
from scanner.readers.yamldoc import load_yaml

TEXT = "include:\n  - template: A.gitlab-ci.yml\njob:\n  variables: {X: 1}\n  script: [echo]\n"


def _doc() -> Document:
    return Document(".gitlab-ci.yml", Path(".gitlab-ci.yml"), "gitlab-ci", TEXT, load_yaml(TEXT))


def test_fields_cannot_be_changed() -> None:
    doc = _doc()
    with pytest.raises(dataclasses.FrozenInstanceError):
        doc.text = "changed"  # type: ignore[misc]
    assert doc.lines == ("include:", "  - template: A.gitlab-ci.yml", "job:", "  variables: {X: 1}",
                         "  script: [echo]")


def test_views_are_computed_once_and_go_with_the_document() -> None:
    gc.collect()
    before = len(ci._VIEWS)
    doc = _doc()
    first = ci.include_entries(doc)
    assert [(e.kind, e.target, e.route) for e in first] == [
        ("template", "A.gitlab-ci.yml", (0, "include", 0, "template"))
    ]
    assert ci.include_entries(doc) is first
    assert [route for route, _ in ci.variable_blocks(doc)] == [(0, "job", "variables")]
    assert len(ci._VIEWS) == before + 1
    gone = weakref.ref(doc)
    del doc, first
    gc.collect()
    assert gone() is None
    assert len(ci._VIEWS) == before
