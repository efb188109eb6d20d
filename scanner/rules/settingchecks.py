"""Evaluation of a settings document: JSONPath settings, the settings matcher kinds, the
variables it sets and the commands it runs.

Variables are checked against `ci-variable` matchers (a variable of that name set anywhere in
the file) and against the `env:` names of `command` matchers: `REGISTRATION_TOKEN` or
`RUNNER_SHELL` in an env file, a Dockerfile or a container's `env:` exist only for
`gitlab-runner register`, so they are reported wherever they are set, provided the file
mentions the program (`gitlab-runner` in its text, or `runner` in its path or, for an env
file, its text). In CI files the same names count only next to a `register` call.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from scanner.core.document import Document
from scanner.readers.settings.templated import is_templated
from scanner.readers.settings.views import command_lines, env_vars
from scanner.rules.hits import Hit
from scanner.rules.match import PolicyIndex, _route_of, command_hits, evaluate_tree, variable_test
from scanner.rules.matchers import CommandMatcher
from scanner.rules.policy import Policy
from scanner.rules.settingkinds import ImplicitDefaultMatcher, RequiredKeysMatcher, SecretFileMatcher

MAX_KEY_FILE = 4096


def evaluate_settings(index: PolicyIndex, doc: Document) -> Iterator[Hit]:
    yield from evaluate_tree(index, doc)
    for policy, m in index.settings:
        if isinstance(m, ImplicitDefaultMatcher):
            yield from _implicit_default(doc, policy, m)
        elif isinstance(m, RequiredKeysMatcher):
            yield from _required_keys(doc, policy, m)
        elif isinstance(m, SecretFileMatcher):
            yield from _secret_file(doc, policy, m)
    if index.variables or index.commands:
        yield from _variables(index, doc)
    if index.commands and doc.kind in ("dockerfile", "compose", "k8s-manifest"):
        programs = frozenset(p for _, m in index.commands for p in m.programs)
        yield from command_hits(index, doc, command_lines(doc, programs))


def _matches(doc: Document, expression: Any, keys: frozenset[str]) -> Iterator[tuple[tuple[Any, ...], Any]]:
    if not keys <= doc.data.keys:
        return
    for n, root in enumerate(doc.data.roots):
        for match in expression.find(root):
            yield (n,) + _route_of(match.full_path), match.value


def _implicit_default(doc: Document, policy: Policy, m: ImplicitDefaultMatcher) -> Iterator[Hit]:
    for route, parent in _matches(doc, m.parent, m.required_keys):
        if len(route) < 2 or not isinstance(parent, dict) or m.key in parent:
            continue
        if m.when is None or parent.get(m.when) is True:
            yield Hit(policy, route, "key", f"`{m.key}` not set, so `{m.default}`")


def _required_keys(doc: Document, policy: Policy, m: RequiredKeysMatcher) -> Iterator[Hit]:
    for route, mapping in _matches(doc, m.expression, m.required_keys):
        if len(route) < 2 or not isinstance(mapping, dict) or any(is_templated(str(k)) for k in mapping):
            continue  # keys a template writes (`<%= database %>:`) are not known here
        if any(k not in mapping for k in m.keys):
            yield Hit(policy, route, "key", str(route[-1]))
        first = next(iter(mapping), None)
        if m.first is not None and m.first in mapping and first != m.first:
            yield Hit(policy, route + (first,), "key", str(route[-1]))


def _secret_file(doc: Document, policy: Policy, m: SecretFileMatcher) -> Iterator[Hit]:
    for route, value in _matches(doc, m.expression, m.required_keys):
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


def _variables(index: PolicyIndex, doc: Document) -> Iterator[Hit]:
    mentioned: dict[int, bool] = {}
    for var in env_vars(doc):
        for policy in index.variables.get(var.name, ()):
            test = variable_test(policy, var.name)
            if test is None or test.accepts(var.value):
                yield Hit(policy, var.route, var.part, var.name, var.span)
        for policy, m in index.commands:
            if var.name not in m.env or (m.value is not None and not m.value.accepts(var.value)):
                continue
            if mentioned.setdefault(id(m), _mentions(doc, m)):
                yield Hit(policy, var.route, var.part, var.name, var.span)


def _mentions(doc: Document, m: CommandMatcher) -> bool:
    path = doc.path.lower()
    settings = "\n".join(line for line in doc.lines if not line.lstrip().startswith("#")).lower()
    for program in m.programs:
        short = program.rsplit("-", 1)[-1].lower()
        if program in settings or short in path or (doc.kind == "env-file" and short in settings):
            return True
    return False
