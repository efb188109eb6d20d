"""`required-keys`: mappings that must hold some keys (`ci:` next to `main:` in `database.yml`) or
one key first. Keys a template writes (`<%= database %>:`) are not known, so such mappings are skipped.
`where` narrows the check to mappings holding a key (a CI job with `secrets:` must hold `id_tokens:`),
`extends` judges a CI job with the keys of the jobs it `extends:` in the same file too (hidden `.base`
jobs included; a job extending one from an include is not judged), `skip` leaves out mappings
holding any of its keys (a runner with its own `known_hosts_file`), and `unless` is a JSONPath
that, matching anywhere, settles the document (`default: id_tokens:`) — for CI jobs, except those
that refuse `default:` with `inherit: default: false` (or a list without the key). `condition` names
what the file alone cannot show (a host key in `known_hosts`): such findings say "If …" and are warnings."""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from jsonpath_ng.jsonpath import JSONPath

from scanner.core.document import Document
from scanner.readers import ci
from scanner.rules import spec
from scanner.rules.hits import Hit
from scanner.rules.jsonpath import compile_path, matches
from scanner.rules.kind import MatcherKind
from scanner.rules.policy import Policy

if TYPE_CHECKING:
    from scanner.rules.facets import Facets


class Spec(spec.Spec):
    path: str  # JSONPath of the mappings to check
    keys: tuple[str, ...] = ()
    first: str | None = None  # when present, this key must come first
    where: str | None = None  # check only mappings holding this key (`secrets`); hidden (`.name`) ones are skipped
    # CI jobs: keys come also from the jobs a mapping `extends:` in the same file; one from elsewhere: not judged
    extends: bool = False
    skip: tuple[str, ...] = ()  # mappings holding any of these keys are not judged (`known_hosts_file`)
    unless: str | None = None  # JSONPath: when it matches in the document, nothing is reported
    condition: str | None = None  # as on `jsonpath`: what the file alone cannot show ("If …", a warning)


@dataclass(frozen=True, slots=True)
class RequiredKeysMatcher(spec.Matcher):
    kind: ClassVar[str] = "required-keys"
    expression: JSONPath
    required_keys: frozenset[str]
    keys: tuple[str, ...]
    first: str | None
    where: str | None = None
    extends: bool = False
    unless: tuple[JSONPath, frozenset[str]] | None = None
    skip: frozenset[str] = frozenset()
    condition: str = ""


def compile(s: Spec, build: spec.Build) -> RequiredKeysMatcher:
    if not s.keys and s.first is None:
        raise ValueError("give `keys`, `first`, or both")
    expr, keys = compile_path(s.path)
    unless = compile_path(s.unless) if s.unless else None
    return RequiredKeysMatcher(expr, keys, s.keys, s.first, s.where, s.extends, unless,
                               frozenset(s.skip), s.condition or "")


def evaluate(entries: list[tuple[Policy, RequiredKeysMatcher]], facets: Facets) -> Iterator[Hit]:
    from scanner.readers.settings.templated import is_templated  # imported where a tree is read

    doc = facets.doc
    templated: dict[int, bool] = {}  # per mapping (by identity), for every policy reading it
    inherited: dict[int, frozenset[str] | None] = {}
    for policy, m in entries:
        settled = m.unless is not None and any(True for _ in matches(doc, *m.unless))
        if settled and not m.extends:
            continue
        for route, mapping in matches(doc, m.expression, m.required_keys):
            if len(route) < 2 or not isinstance(mapping, dict):
                continue
            if (t := templated.get(id(mapping))) is None:
                t = templated[id(mapping)] = any(is_templated(str(k)) for k in mapping)
            if t:
                continue
            present: Collection[object] | None = mapping.keys()
            if m.extends:
                if id(mapping) not in inherited:
                    inherited[id(mapping)] = _keys(doc, route, mapping)
                present = inherited[id(mapping)]
            if present is None:
                continue
            if m.where is not None and (m.where not in present or str(route[-1]).startswith(".")):
                continue
            if m.skip & mapping.keys():
                continue
            if settled and all(ci.inherits_default(mapping, k) for k in m.keys):
                continue  # `default:` gives the job the keys (a CI job can refuse them with `inherit:`)
            if any(k not in present for k in m.keys):
                yield Hit(policy, route, "key", str(route[-1]), condition=m.condition)
            first = next(iter(mapping), None)
            if m.first is not None and m.first in mapping and first != m.first:
                yield Hit(policy, route + (first,), "key", str(route[-1]), condition=m.condition)


def _keys(doc: Document, route: tuple[object, ...], mapping: dict[object, object]) -> frozenset[str] | None:
    root = doc.data.roots[route[0]] if isinstance(route[0], int) and len(route) == 2 else None
    return ci.inherited_keys(root, mapping) if isinstance(root, dict) else None  # type: ignore[arg-type]


# A settings matcher: it reads any tree, and applies by default to settings files.
KIND = MatcherKind(Spec, RequiredKeysMatcher, compile, {"tree": evaluate}, applies=("settings-tree",))
