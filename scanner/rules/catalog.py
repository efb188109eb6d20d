"""Loading the catalog: every policy file validated (unknown keys rejected), its matcher compiled
once (regexes, JSONPath) through `scanner.rules.table`, any problem reported as
`file:line: field: problem`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scanner.rules import cache
from scanner.rules.hints import Hint, describe
from scanner.rules.policy import Example, HistoryEntry, Policy, PolicyData, Reference

if TYPE_CHECKING:
    from scanner.rules.schema import PolicyModel

ID_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
FIELD_RE = re.compile(r"^\w+(?:\.\w+)*$")


class PolicyLoadError(Exception):
    """A policy file that cannot be used; the message names file, line and field — one line per problem
    (`problems`), every problem pydantic finds in the file, not only the first."""

    def __init__(self, *problems: str) -> None:
        super().__init__("\n".join(problems))
        self.problems = list(problems)


def _line_of(tree_lines: dict[tuple[str | int, ...], int], loc: tuple[str | int, ...]) -> int:
    """The deepest known line for a pydantic error location."""
    for cut in range(len(loc), -1, -1):
        if loc[:cut] in tree_lines:
            return tree_lines[loc[:cut]]
    return 1


def _load_one(path: Path, data: bytes) -> Policy:
    """Parse, validate and compile one policy file. The YAML reader, pydantic (through the schema) and
    the matcher table are imported here, on a cache miss only."""
    from pydantic import ValidationError

    from scanner.readers.yamldoc import YamlError, load_yaml
    from scanner.rules.documents import derived_kinds
    from scanner.rules.schema import PolicyModel
    from scanner.rules.table import build_matcher, facets_of

    try:
        text = data.decode("utf-8")
        doc = load_yaml(text, str(path))
    except UnicodeDecodeError as exc:
        raise PolicyLoadError(f"{path}:1: cannot read policy: {exc}") from exc
    except YamlError as exc:
        raise PolicyLoadError(f"{path}:{exc.line}: {exc.message}") from exc  # the message says `invalid YAML`
    if not doc.roots or not isinstance(doc.roots[0], dict):
        raise PolicyLoadError(f"{path}:1: a policy file must be a mapping")
    root = doc.roots[0]
    stem = path.stem
    if not ID_RE.match(stem):
        raise PolicyLoadError(f"{path}:1: id: file stem {stem!r} is not a lowercase-dashed policy id")
    try:
        model = PolicyModel.model_validate(root)
    except ValidationError as exc:
        lines = doc.key_lines(0)
        errors = exc.errors()
        # a list whose every item failed is also "too short" after validation: the items' errors say why
        causes = [e for e in errors if not (e["type"] == "too_short" and any(
            len(o["loc"]) > len(e["loc"]) and o["loc"][:len(e["loc"])] == e["loc"] for o in errors))]
        raise PolicyLoadError(*(f"{path}:{_line_of(lines, tuple(err['loc']))}: "
                                f"{'.'.join(str(p) for p in err['loc']) or '(top)'}: {err['msg']}"
                                for err in causes)) from None
    try:
        matcher = build_matcher(model.match)
    except ValueError as exc:
        # a problem starts with its key's route (`matchers.0.regex: …`): the line of that key
        field = str(exc).split(": ", 1)[0]
        loc = ("match", *(int(p) if p.isdigit() else p for p in field.split("."))) if FIELD_RE.match(field) else ()
        line = _line_of(doc.key_lines(0), loc or ("match",))  # positions only when reporting a problem
        raise PolicyLoadError(f"{path}:{line}: match: {exc}") from None
    # left out, it applies to every kind of document carrying what the matcher reads
    applies_to = model.applies_to or derived_kinds(facets_of(matcher))
    return Policy(id=stem, source=path, data=_plain(model, applies_to, root.get("fix")), matcher=matcher)


def _plain(model: PolicyModel, applies_to: tuple[str, ...], fix: Any) -> PolicyData:
    """The validated model as plain data (the cache holds no pydantic object); `fix:` as written."""
    hints = tuple(Hint(c.text, c.kinds, c.route, c.match) for c in model.replacement or ())
    return PolicyData(
        title=model.title, summary=model.summary, message=model.message, rationale=model.rationale,
        remediation=model.remediation, replacement=describe(hints), deprecated_in=model.deprecated_in,
        removed_in=model.removed_in, breaking=model.breaking, informational=model.informational,
        origin=model.origin,
        history=tuple(HistoryEntry(h.release, h.event, h.note, h.reference, h.removed_in) for h in model.history),
        references=tuple(Reference(r.title, r.url) for r in model.references),
        applies_to=applies_to, match=model.match, example=Example(model.example.before, model.example.after),
        fix=tuple(fix) if isinstance(fix, list) else (fix,) if isinstance(fix, dict) else (),
        hints=hints,
    )


def builtin_policy_dir() -> Path:
    """The policies shipped with sunset (installed package data or the source checkout)."""
    package = Path(__file__).resolve().parents[1]  # scanner/
    installed = package / "policies"
    return installed if installed.is_dir() else package.parent / "policies"


def load_policies(dirs: Iterable[Path]) -> list[Policy]:
    """Load every `*.yaml` below each directory; duplicate ids are an error. The compiled catalog
    is cached by content (`scanner.rules.cache`)."""
    files = _policy_files(list(dirs))
    key = cache.catalog_key(files)
    cached = cache.read(key)
    if cached is not None:
        return cached
    policies: dict[str, Policy] = {}
    for path, data in files:
        policy = _load_one(path, data)
        if policy.id in policies:
            first = policies[policy.id].source
            raise PolicyLoadError(f"{path}:1: id: duplicate policy id {policy.id!r} (also {first})")
        policies[policy.id] = policy
    loaded = sorted(policies.values(), key=lambda p: p.id)
    cache.write(key, loaded)
    return loaded


def check_policies(dirs: Iterable[Path], known: Iterable[Policy] = ()) -> tuple[int, list[str]]:
    """`sunset policies check`: every file below `dirs` loaded on its own, every problem of every file
    (`file:line: field: problem`), and ids used twice (among them, or by a `known` policy). Returns
    the number of files and the problems, in file order."""
    problems: list[str] = []
    seen = {p.id: p.source for p in known}
    files = _policy_files(list(dirs))
    for path, data in files:
        try:
            policy = _load_one(path, data)
        except PolicyLoadError as exc:
            problems += exc.problems
            continue
        if policy.id in seen:
            problems.append(f"{path}:1: id: duplicate policy id {policy.id!r} (also {seen[policy.id]})")
        seen.setdefault(policy.id, path)
    return len(files), problems


def _policy_files(dirs: list[Path]) -> list[tuple[Path, bytes]]:
    files = []
    for directory in dirs:
        if not directory.is_dir():
            raise PolicyLoadError(f"{directory}: policy directory does not exist")
        for path in sorted(directory.rglob("*.yaml")):
            try:
                files.append((path, path.read_bytes()))
            except OSError as exc:
                raise PolicyLoadError(f"{path}:1: cannot read policy: {exc}") from exc
    return files
