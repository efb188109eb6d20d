"""`secret-file`: a setting naming a key file. The path must be absolute, and a file found in the
scanned tree must hold a base64-encoded key of the expected size; its content never appears in output."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import TYPE_CHECKING, ClassVar

from jsonpath_ng.jsonpath import JSONPath

from scanner.core.document import Document
from scanner.rules import spec
from scanner.rules.hits import Hit
from scanner.rules.jsonpath import compile_path, matches
from scanner.rules.kind import MatcherKind
from scanner.rules.policy import Policy

if TYPE_CHECKING:
    from scanner.rules.facets import Facets


class Spec(spec.Spec):
    path: str  # JSONPath of the setting holding the file path
    key_bytes: int = spec.field(32, ge=1)

MAX_KEY_FILE = 4096


@dataclass(frozen=True, slots=True)
class SecretFileMatcher(spec.Matcher):
    kind: ClassVar[str] = "secret-file"
    expression: JSONPath
    required_keys: frozenset[str]
    key_bytes: int


def compile(s: Spec, build: spec.Build) -> SecretFileMatcher:
    expr, keys = compile_path(s.path)
    return SecretFileMatcher(expr, keys, s.key_bytes)


def evaluate(entries: list[tuple[Policy, SecretFileMatcher]], facets: Facets) -> Iterator[Hit]:
    doc = facets.doc
    for policy, m in entries:
        yield from _check(doc, policy, m)


def _check(doc: Document, policy: Policy, m: SecretFileMatcher) -> Iterator[Hit]:
    from scanner.readers.settings.templated import is_templated  # imported where a tree is read

    for route, value in matches(doc, m.expression, m.required_keys):
        if not isinstance(value, str) or not value.strip() or is_templated(value) or value.startswith("$"):
            continue  # set by a template or a variable: not known here
        problems = [] if _absolute(value) else [f"`{value}` is not an absolute path"]
        found = _find(doc.abspath, value)
        if found is not None:
            problems += _key_problems(found, value, m.key_bytes)
        if problems:
            yield Hit(policy, route, "value", "; ".join(problems))


def _absolute(value: str) -> bool:
    return PurePosixPath(value).is_absolute() or PureWindowsPath(value).is_absolute()


def _find(settings: Path, value: str) -> Path | None:
    """The file a path names, if it is in the scanned tree: `/etc/gitlab/x` is looked for as
    `etc/gitlab/x`, `gitlab/x` and `x` beside the settings file and in its parent folders up
    to the repository root; a relative path beside the file and in its parent (Rails root)."""
    parts = [p for p in PurePosixPath(value.replace("\\", "/")).parts if p not in ("/", ".")]
    if not parts or ".." in parts:
        return None
    suffixes = [parts[k:] for k in range(len(parts))] if _absolute(value) else [parts]
    for base in _bases(settings.parent):
        for suffix in suffixes:
            candidate = base.joinpath(*suffix)
            if candidate.is_file():
                return candidate
    return None


def _bases(folder: Path) -> list[Path]:
    bases = [folder]
    for parent in folder.parents:
        if len(bases) > 6:
            break
        bases.append(parent)
        if (parent / ".git").exists():
            break
    return bases


def _key_problems(path: Path, value: str, size: int) -> list[str]:
    """Never returns the file's content: only what is wrong with it."""
    try:
        raw = path.read_bytes()[: MAX_KEY_FILE + 1]
    except OSError:
        return []
    if len(raw) > MAX_KEY_FILE:
        return [f"`{value}` is too large to be a key file"]
    text = raw.decode("latin-1")
    for end in ("\r\n", "\n", "\r"):  # Ruby's `chomp`, as mail_room reads it
        if text.endswith(end):
            text = text[: -len(end)]
            break
    try:
        key = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return [f"`{value}` does not hold strict base64 text"]
    if len(key) != size:
        return [f"`{value}` decodes to {len(key)} bytes, not {size}"]
    return []


# A settings matcher: it reads any tree, and applies by default to settings files.
KIND = MatcherKind(Spec, SecretFileMatcher, compile, {"tree": evaluate}, applies=("settings-tree",))
