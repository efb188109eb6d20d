"""`required-keys`: mappings that must hold some keys (`ci:` next to `main:` in `database.yml`) or
one key first. Keys a template writes (`<%= database %>:`) are not known, so such mappings are skipped.
`where` narrows the check to mappings holding a key (a CI job with `secrets:` must hold `id_tokens:`),
`skip` leaves out mappings holding keys that are not resolved (`extends:`), and `unless` is a JSONPath
that, matching anywhere, settles the document (`default: id_tokens:`). `condition` names what the
file alone cannot show (a host key in `known_hosts`): such findings say "If …" and are warnings."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from jsonpath_ng.jsonpath import JSONPath

from scanner.core.document import Document
from scanner.rules import spec
from scanner.rules.hits import Hit
from scanner.rules.jsonpath import matches
from scanner.rules.jsonpaths import compile_path
from scanner.rules.policy import Policy

if TYPE_CHECKING:
    from scanner.rules import schema


@dataclass(frozen=True, slots=True)
class RequiredKeysMatcher(spec.Matcher):
    kind: ClassVar[str] = "required-keys"
    expression: JSONPath
    required_keys: frozenset[str]
    keys: tuple[str, ...]
    first: str | None
    where: str | None = None
    skip: frozenset[str] = frozenset()
    unless: tuple[JSONPath, frozenset[str]] | None = None
    condition: str = ""


def compile(s: schema.RequiredKeysSpec, build: spec.Build) -> RequiredKeysMatcher:
    if not s.keys and s.first is None:
        raise ValueError("give `keys`, `first`, or both")
    expr, keys = compile_path(s.path)
    unless = compile_path(s.unless) if s.unless else None
    return RequiredKeysMatcher(expr, keys, s.keys, s.first, s.where, frozenset(s.skip), unless, s.condition or "")


def evaluate(entries: Iterable[tuple[Policy, RequiredKeysMatcher]], doc: Document) -> Iterator[Hit]:
    from scanner.readers.settings.templated import is_templated  # settings files only

    for policy, m in entries:
        if m.unless is not None and any(True for _ in matches(doc, *m.unless)):
            continue
        for route, mapping in matches(doc, m.expression, m.required_keys):
            if len(route) < 2 or not isinstance(mapping, dict) or any(is_templated(str(k)) for k in mapping):
                continue
            if m.where is not None and (m.where not in mapping or str(route[-1]).startswith(".")):
                continue
            if m.skip & mapping.keys():
                continue
            if any(k not in mapping for k in m.keys):
                yield Hit(policy, route, "key", str(route[-1]), condition=m.condition)
            first = next(iter(mapping), None)
            if m.first is not None and m.first in mapping and first != m.first:
                yield Hit(policy, route + (first,), "key", str(route[-1]), condition=m.condition)
