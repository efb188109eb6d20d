"""What a GitLab CI file means: its include entries, jobs, variable blocks and scripts.

Everything here reads one parsed CI `Document` and yields routes into it; nothing here
knows about policies. Values written once and referenced through anchors, aliases or
merge keys are visited once (by identity), at the place they are written.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from scanner.core.document import Document
from scanner.core.results import Route
from scanner.core.tree import walk

# Top-level keywords that are not jobs (GitLab's `Gitlab::Ci::Config::Entry::Root`).
GLOBAL_KEYWORDS = frozenset(
    {"default", "include", "stages", "variables", "workflow", "image", "services", "cache",
     "before_script", "after_script", "spec", "types"}
)
SCRIPT_KEYS = ("before_script", "script", "after_script")
T = TypeVar("T")
INCLUDE_KINDS = ("local", "template", "project", "remote", "component", "artifact")
# GitLab stops a pipeline at 150 includes (the engine reports that); past this many entries in one
# file (aliases can repeat a list in every job's `trigger: include:`) the rest are not read.
MAX_ENTRIES = 1000


@dataclass(frozen=True, slots=True)
class IncludeEntry:
    kind: str  # local | template | project | remote | component | invalid
    target: str
    route: Route  # to the value naming the target
    inputs_route: Route | None = None
    ref: str | None = None
    problem: str = ""
    child: bool = False  # from `trigger: include:`: the root of a child pipeline


def _entries(value: Any, route: Route, child: bool = False) -> Iterator[IncludeEntry]:
    if isinstance(value, str):
        kind = "remote" if value.startswith(("http://", "https://")) else "local"
        yield IncludeEntry(kind, value, route, child=child)
        return
    if not isinstance(value, dict):
        yield IncludeEntry("invalid", _describe(value), route, problem="an include must be a string or a mapping")
        return
    kinds = [k for k in INCLUDE_KINDS if k in value]
    if len(kinds) != 1 or (kinds[0] == "project" and "file" not in value):
        what = ", ".join(kinds) or "no local/template/project/remote/component key"
        yield IncludeEntry("invalid", what, route, problem=f"unknown include form ({what})")
        return
    kind = kinds[0]
    inputs = route + ("inputs",) if isinstance(value.get("inputs"), dict) else None
    if kind == "project":
        files = value["file"]
        ref = value.get("ref")
        ref = None if ref is None else str(ref)
        if isinstance(files, list):
            for i, f in enumerate(files):
                yield IncludeEntry(kind, f"{value['project']}:{f}", route + ("file", i), inputs, ref, child=child)
        else:
            yield IncludeEntry(kind, f"{value['project']}:{files}", route + ("file",), inputs, ref, child=child)
        return
    yield IncludeEntry(kind, str(value[kind]), route + (kind,), inputs, child=child)


# Views of a document, computed once however many policies ask for them; they go with the document.
_VIEWS: weakref.WeakKeyDictionary[Document, dict[str, Any]] = weakref.WeakKeyDictionary()


def _memo(doc: Document, name: str, make: Callable[[Document], Iterator[T]]) -> list[T]:
    views = _VIEWS.get(doc)
    if views is None:
        views = _VIEWS[doc] = {}
    cached: list[T] | None = views.get(name)
    if cached is None:
        cached = views[name] = list(make(doc))
    return cached


def include_entries(doc: Document) -> list[IncludeEntry]:
    """Every `include:` entry of every YAML document in the file, then each job's
    `trigger: include:` (the configuration of a child pipeline), in order."""
    return _memo(doc, "include_entries", _include_entries)


def _include_entries(doc: Document) -> Iterator[IncludeEntry]:
    places: list[tuple[Route, Any, bool]] = [
        ((index, "include"), root["include"], False)
        for index, root in enumerate(doc.data.roots)
        if isinstance(root, dict) and "include" in root
    ]
    for route, body in jobs(doc):
        trigger = body.get("trigger")
        if isinstance(trigger, dict) and "include" in trigger:
            places.append((route + ("trigger", "include"), trigger["include"], True))
    count = 0
    for route, value, child in places:
        items = enumerate(value) if isinstance(value, list) else [(None, value)]
        for i, item in items:
            for entry in _entries(item, route if i is None else route + (i,), child):
                count += 1
                if count > MAX_ENTRIES:
                    yield IncludeEntry("invalid", "", entry.route, problem=f"more than {MAX_ENTRIES} include "
                                       "entries in one file; the rest are not read")
                    return
                yield entry


def _describe(value: Any) -> str:
    """A short description of a value (never its whole `repr`: an alias tree repeats itself)."""
    if isinstance(value, list):
        return f"a list of {len(value)} items"
    if isinstance(value, dict):
        return f"a mapping of {len(value)} keys"
    return repr(value)[:80]


def jobs(doc: Document) -> list[tuple[Route, dict[str, Any]]]:
    """Jobs and hidden jobs (`.name`), plus `default:`; anything mapping-valued at the top."""
    return _memo(doc, "jobs", _jobs)


def _jobs(doc: Document) -> Iterator[tuple[Route, dict[str, Any]]]:
    for index, root in enumerate(doc.data.roots):
        if not isinstance(root, dict) or "spec" in root and len(root) == 1:
            continue
        for name, body in root.items():
            if isinstance(body, dict) and (name not in GLOBAL_KEYWORDS or name == "default"):
                yield (index, name), body


# GitLab refuses `extends:` nested deeper than this (`Gitlab::Ci::Config::Extendable::Entry::MAX_NESTING_LEVELS`).
MAX_EXTENDS_DEPTH = 10


def inherited_keys(root: dict[str, Any], body: dict[str, Any]) -> frozenset[str] | None:
    """A job's keys together with those of the jobs it `extends:` in the same file, as GitLab merges
    them; None when a job it extends is not in this file (it comes from an include) or nests too deep."""
    keys: set[str] = set()
    pending: list[tuple[dict[str, Any], int]] = [(body, 0)]
    while pending:
        job, depth = pending.pop()
        keys.update(str(k) for k in job)
        parents = job.get("extends")
        if parents is None:
            continue
        for name in parents if isinstance(parents, list) else [parents]:
            parent = root.get(name) if isinstance(name, str) else None
            if not isinstance(parent, dict) or depth >= MAX_EXTENDS_DEPTH:
                return None
            pending.append((parent, depth + 1))
    return frozenset(keys)


def inherits_default(body: dict[str, Any], key: str) -> bool:
    """Whether a job takes `key` from `default:`: not with `inherit: default: false`, nor with a
    `inherit: default: [...]` list that leaves the key out."""
    inherit = body.get("inherit")
    chosen = inherit.get("default", True) if isinstance(inherit, dict) else True
    return chosen is not False and (not isinstance(chosen, list) or key in chosen)


def variable_blocks(doc: Document) -> list[tuple[Route, dict[str, Any]]]:
    """Every place a variable is set: global, per job, and include `inputs:` (computed once per document)."""
    return _memo(doc, "variable_blocks", _variable_blocks)


def _variable_blocks(doc: Document) -> Iterator[tuple[Route, dict[str, Any]]]:
    seen: set[int] = set()
    for index, root in enumerate(doc.data.roots):
        if isinstance(root, dict) and isinstance(root.get("variables"), dict):
            seen.add(id(root["variables"]))
            yield (index, "variables"), root["variables"]
    for route, body in jobs(doc):
        for key in ("variables",):
            block = body.get(key)
            if isinstance(block, dict) and id(block) not in seen:
                seen.add(id(block))
                yield route + (key,), block
        trigger = body.get("trigger")
        if isinstance(trigger, dict) and isinstance(trigger.get("inputs"), dict) and id(trigger["inputs"]) not in seen:
            seen.add(id(trigger["inputs"]))
            yield route + ("trigger", "inputs"), trigger["inputs"]
    for entry in include_entries(doc):
        if entry.inputs_route is not None:
            block = walk(doc.data.roots, entry.inputs_route)
            if isinstance(block, dict) and id(block) not in seen:
                seen.add(id(block))
                yield entry.inputs_route, block


def variable_value(value: Any) -> Any:
    """`NAME: value` or `NAME: {value: ..., description: ...}`."""
    return value.get("value") if isinstance(value, dict) else value


@dataclass(frozen=True, slots=True)
class ScriptItem:
    text: str
    route: Route  # to the scalar
    job: Route  # the job (or top-level) that owns the script


def scripts(doc: Document) -> Iterator[ScriptItem]:
    """Each command string of every script section, once, where it is written.

    `!reference [...]` items point at scripts written elsewhere; they are scanned there.
    Nested lists (GitLab flattens them) are followed; shared lists only once.
    """
    seen: set[int] = set()
    owners: list[tuple[Route, dict[str, Any]]] = [
        ((i, "(global)"), root) for i, root in enumerate(doc.data.roots) if isinstance(root, dict)
    ]
    owners.extend(jobs(doc))
    for route, body in owners:
        hooks = body.get("hooks") if route[1] != "(global)" else None
        sections = [(key, body.get(key)) for key in SCRIPT_KEYS]
        if isinstance(hooks, dict):
            sections.append(("hooks", hooks.get("pre_get_sources_script")))
        base = route[:1] if route[1] == "(global)" else route
        for key, value in sections:
            step: Route = base + (key,) if key != "hooks" else base + ("hooks", "pre_get_sources_script")
            yield from _flatten(value, step, route, seen)


def _flatten(value: Any, route: Route, job: Route, seen: set[int], depth: int = 0) -> Iterator[ScriptItem]:
    if isinstance(value, str):
        yield ScriptItem(value, route, job)
    elif isinstance(value, list) and id(value) not in seen and depth < 10:
        seen.add(id(value))
        for i, item in enumerate(value):
            yield from _flatten(item, route + (i,), job, seen, depth + 1)
