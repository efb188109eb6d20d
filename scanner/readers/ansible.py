"""Ansible task files and playbooks: the shell commands their tasks run, read by the shell reader at
their place in the YAML file.

A task runs a command through `command:`/`shell:` (also `ansible.builtin.*`, `ansible.legacy.*`): a
string, a mapping with `cmd:` or `argv:` (a list of words), or `args: {cmd: …}`; or through a
container, the `command:` of a `docker_container` (`community.docker.docker_container`) task, run
by the image's own program when the image is one the policies name (`gitlab/gitlab-runner` runs
`gitlab-runner`). Each task is one shell.

Jinja is read as Ansible fills it in only where the value is known in the role: `{{ name }}` naming a
`set_fact` string of the same file is that string, at its own place (a command built in one task and
run in another), and `{{ name }}` naming a plain string of the role's `defaults/main.yml` or
`vars/main.yml` is that string, placed at the placeholder. Every other expression is a placeholder
word that equals nothing; `{% … %}` and `{# … #}` tags are blanks (both branches of an `if` are read).

Recognition: a YAML file whose root is a list, with a task running a command, in a role's `tasks/`
or `handlers/` folder or holding a play (`- hosts:`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scanner.core.document import Document
from scanner.core.files import MAX_FILE_BYTES, ReadProblem, read_settings_text
from scanner.core.results import Route
from scanner.core.tree import ParseError, Tree
from scanner.readers import ci
from scanner.readers.settings.detect import head
from scanner.readers.shell import ScriptText, map_lines
from scanner.readers.yamldoc import load_yaml
from scanner.readers.yamlrepair import read_yaml

Pos = tuple[int, int]
Items = list[tuple[ci.ScriptItem, ScriptText]]

_COMMANDS = frozenset({"command", "shell", "ansible.builtin.command", "ansible.builtin.shell",
                       "ansible.legacy.command", "ansible.legacy.shell"})
_CONTAINERS = frozenset({"docker_container", "community.docker.docker_container"})
_SET_FACT = frozenset({"set_fact", "ansible.builtin.set_fact", "ansible.legacy.set_fact"})
# Keys holding further tasks: a play's lists, a block's.
_NESTED = ("pre_tasks", "tasks", "post_tasks", "handlers", "block", "rescue", "always")
_ROLE_FOLDERS = frozenset({"tasks", "handlers"})

_LIST_ROOT = re.compile(r"\A(?:[ \t]*(?:#[^\n]*)?\r?\n|---[ \t]*\r?\n|%[^\n]*\n)*-[ \t\r\n]")
_MODULE = re.compile(r"(?m)^[ \t]*(?:-[ \t]+)?(?:(?:ansible\.(?:builtin|legacy)\.)?(?:command|shell)"
                     r"|(?:community\.docker\.)?docker_container)[ \t]*:")
_PLAY = re.compile(r"(?m)^-[ \t]+(?:hosts|(?:ansible\.builtin\.)?import_playbook)[ \t]*:")
# `{{ name }}` alone; any other `{{ … }}`; a statement or comment tag.
_NAME = re.compile(r"\{\{-?[ \t]*([A-Za-z_][A-Za-z0-9_]*)[ \t]*-?\}\}")
_TAG = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.S)
_CONTINUED = re.compile(r"(?<= )\\(?= )")
PLACEHOLDER = "\ue001"  # an expression's characters: one word that equals nothing
_MAX_DEPTH = 3
_MAX_VALUE = 64 * 1024  # a role variable longer than this is left a placeholder


def is_ansible(path: Path) -> bool:
    """A task file or playbook that runs a command (see the module's docstring)."""
    if path.suffix not in (".yml", ".yaml"):
        return False
    text = head(path)
    if not _LIST_ROOT.match(text) or not _MODULE.search(text):
        return False
    return path.parent.name in _ROLE_FOLDERS or bool(_PLAY.search(text))


def parse_ansible(text: str) -> Tree:
    return read_yaml(text)


@dataclass(frozen=True, slots=True)
class _Command:
    task: Route
    step: Route  # to the command's value
    value: str
    where: ScriptText  # where the value is written
    program: str = ""  # a container's: the image's own program
    program_at: Pos = (0, 0)  # where the image is named
    split: bool = True  # split into words, not run by a shell: a line break is a space (`command:`)
    folded: bool = False  # a folded block (`>`): a backslash ending a source line continues it


@dataclass(frozen=True, slots=True)
class _Var:
    value: str
    where: ScriptText | None  # its place in this file (a `set_fact`), None: another file's


def ansible_scripts(doc: Document, prefilter: re.Pattern[str]) -> Items:
    """Each command a task runs, with its known variables filled in, at its place in the file."""
    tasks = list(_tasks(doc))
    found: list[_Command] = []
    facts: dict[str, _Var] = {}
    for route, task in tasks:
        for module in _SET_FACT & task.keys():
            body = task[module]
            if isinstance(body, dict):
                for name, value in body.items():
                    if isinstance(name, str) and isinstance(value, str):
                        step = route + (module, name)
                        facts[name] = _Var(value, map_lines(value, doc.span(step, "value"), doc.lines))
        found.extend(_commands(doc, route, task))
    if not found:
        return []
    variables: dict[str, _Var] | None = None
    out: Items = []
    for command in found:
        prefix = command.program if command.program and prefilter.search(command.program) else ""
        if prefilter.search(command.value) is None and not prefix and not _NAME.search(command.value):
            continue
        if variables is None:
            variables = {**_role_vars(doc.abspath), **facts}
        script = _filled(command, prefix, variables)
        if prefilter.search(script.text) is not None:
            out.append((ci.ScriptItem(script.text, command.step, command.task), script))
    return out


def _tasks(doc: Document) -> list[tuple[Route, dict[str, Any]]]:
    out: list[tuple[Route, dict[str, Any]]] = []
    pending: list[tuple[Route, Any]] = [((n,), root) for n, root in enumerate(doc.data.roots)]
    seen: set[int] = set()
    while pending:
        route, value = pending.pop(0)
        if not isinstance(value, list) or id(value) in seen:
            continue
        seen.add(id(value))
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                continue
            out.append((route + (i,), item))
            pending.extend((route + (i, key), item[key]) for key in _NESTED if key in item)
    return out


def _commands(doc: Document, route: Route, task: dict[str, Any]) -> list[_Command]:
    out: list[_Command] = []
    for module in sorted(_COMMANDS & task.keys()):
        body, step = task[module], route + (module,)
        args = task.get("args")
        if body is None and isinstance(args, dict) and isinstance(args.get("cmd"), str):
            body, step = args["cmd"], route + ("args", "cmd")
        if isinstance(body, dict):
            if isinstance(body.get("cmd"), str):
                body, step = body["cmd"], step + ("cmd",)
            elif isinstance(body.get("argv"), list):
                out.extend(_argv(doc, route, step + ("argv",), body["argv"]))
                continue
        if isinstance(body, str):
            span = doc.span(step, "value")
            out.append(_Command(route, step, body, map_lines(body, span, doc.lines), split=not module.endswith("shell"),
                                folded=doc.line_text(span[0])[span[1] - 1 : span[1]] == ">"))
    for module in sorted(_CONTAINERS & task.keys()):
        body = task[module]
        if not isinstance(body, dict) or "entrypoint" in body:
            continue
        image = body.get("image")
        if not isinstance(image, str):
            continue
        program = image.split("@", 1)[0].rsplit("/", 1)[-1].split(":", 1)[0]
        at = doc.span(route + (module, "image"), "value")[:2]
        command, step = body.get("command"), route + (module, "command")
        if isinstance(command, str):
            span = doc.span(step, "value")
            out.append(_Command(route, step, command, map_lines(command, span, doc.lines), program, at,
                                folded=doc.line_text(span[0])[span[1] - 1 : span[1]] == ">"))
        elif isinstance(command, list):
            out.extend(_Command(c.task, c.step, c.value, c.where, program, at)
                       for c in _argv(doc, route, step, command))
    return out


def _argv(doc: Document, route: Route, step: Route, words: list[Any]) -> list[_Command]:
    """A list of words as one command line, each word quoted for the shell, at its own place."""
    text: list[str] = []
    chars: list[Pos] = []
    for i, word in enumerate(words):
        if not isinstance(word, str):
            return []
        line, col, _, _ = doc.span(step + (i,), "value")
        col += 1 if doc.line_text(line)[col - 1 : col] in ("'", '"') else 0
        quoted = word if re.fullmatch(r"[\w@%+=:,./{}$-]+", word) else "'" + word.replace("'", "'\\''") + "'"
        if text:
            text.append(" ")
            chars.append(chars[-1])
        inner = 1 if quoted != word else 0
        for k, c in enumerate(quoted):
            chars.append((line, col + max(0, min(k - inner, len(word) - 1))))
            text.append(c)
    if not text:
        return []
    joined = "".join(text)
    return [_Command(route, step, joined, ScriptText(joined, (chars[0],), chars=tuple(chars)))]


def _filled(command: _Command, prefix: str, variables: dict[str, _Var]) -> ScriptText:
    """The command with known variables put in and other tags neutralised, each character at its place.
    A command that is split into words (`command:`, a container's) reads a line break as a space (and a
    backslash ending a line as nothing); in a folded block a backslash before a space was a line
    continuation the folding joined."""
    rewritten = (command.split and "\n" in command.value.rstrip("\n")) or (command.folded and " \\ " in command.value)
    if not prefix and not rewritten and not _TAG.search(command.value):
        return command.where
    text: list[str] = []
    chars: list[Pos] = []
    if prefix:
        line, col = command.program_at
        text.append(prefix + " ")
        chars.extend((line, col + k) for k in range(len(prefix) + 1))
    _put(command.value, command.where, variables, text, chars, 0, command.where.pos_at(0))
    joined = "".join(text)
    if command.split:  # a backslash ending a line continues it, as the author meant
        joined = joined.replace("\\\n", "  ").replace("\n", " ")
    if command.folded:
        joined = _CONTINUED.sub(" ", joined)
    return ScriptText(joined, (chars[0],), chars=tuple(chars)) if joined else command.where


def _put(value: str, where: ScriptText | None, variables: dict[str, _Var], text: list[str], chars: list[Pos],
         depth: int, anchor: Pos) -> None:
    """`value` appended, its characters at `where` (or all at `anchor` when it is another file's)."""
    def pos(offset: int) -> Pos:
        return where.pos_at(offset) if where is not None else anchor

    at = 0
    for m in _TAG.finditer(value):
        for k in range(at, m.start()):
            text.append(value[k])
            chars.append(pos(k))
        name = _NAME.fullmatch(m.group())
        known = variables.get(name.group(1)) if name is not None and depth < _MAX_DEPTH else None
        if known is not None:
            _put(known.value, known.where, variables, text, chars, depth + 1,
                 pos(m.start()) if known.where is None else known.where.pos_at(0))
        else:
            fill = PLACEHOLDER if m.group().startswith("{{") else " "
            for k in range(m.start(), m.end()):
                text.append("\n" if value[k] == "\n" else fill)
                chars.append(pos(k))
        at = m.end()
    for k in range(at, len(value)):
        text.append(value[k])
        chars.append(pos(k))


def _role_vars(path: Path) -> dict[str, _Var]:
    """Plain string variables of the role a task file belongs to (`../defaults/main.yml`, then
    `../vars/main.yml`, which wins). A file that cannot be read gives none: its placeholders stay."""
    if path.parent.name not in _ROLE_FOLDERS:
        return {}
    out: dict[str, _Var] = {}
    for folder in ("defaults", "vars"):
        for name in ("main.yml", "main.yaml"):
            file = path.parent.parent / folder / name
            if not file.is_file():
                continue
            text = read_settings_text(file, MAX_FILE_BYTES)
            if isinstance(text, ReadProblem):
                continue  # its placeholders stay placeholders
            try:
                roots = load_yaml(text).roots
            except ParseError:
                continue  # likewise
            for root in roots:
                if isinstance(root, dict):
                    out.update((k, _Var(v, None)) for k, v in root.items()
                               if isinstance(k, str) and isinstance(v, str) and len(v) <= _MAX_VALUE)
    return out
