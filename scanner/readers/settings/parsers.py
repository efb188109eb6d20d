"""The parse function of each settings kind (text → `Tree`), built from the readers beside it.

Some kinds add something to what their reader gives:

* `database.yml` must map environment names to settings; a list or a scalar there is an
  input error for that file.
* In the GitLab Runner Helm chart, `runners.config` is a `config.toml` written as a YAML block.
  It is read as TOML and put in the tree in place of the string, with every position mapped
  back to the values file, so `runners.config.runners[0].kubernetes.…` has an exact line.
* `GITLAB_OMNIBUS_CONFIG` (the Omnibus image reads it as `gitlab.rb` settings) set by a compose
  service, a Kubernetes container or an env file is parsed as `gitlab.rb`, positions mapped back
  likewise, and kept as an embedded `omnibus-config` document (`Tree.embedded`), which the
  Omnibus policies check.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from scanner.core.tree import ParseError, Span, Tree
from scanner.readers.settings.dockerfile import parse_env_file
from scanner.readers.settings.templated import STANDINS, load_templated_yaml
from scanner.readers.settings.toml import load_toml
from scanner.readers.settings.views import containers
from scanner.readers.shell import ScriptText, map_lines

OMNIBUS_CONFIG = "GITLAB_OMNIBUS_CONFIG"  # the Omnibus image reads this variable as gitlab.rb settings
Move = Callable[[Span], Span]


def parse_database_yml(text: str) -> Tree:
    tree = load_templated_yaml(text)
    for root, span in zip(tree.roots, tree.root_spans, strict=True):
        if not isinstance(root, dict):
            found = "a list" if isinstance(root, list) else "a single value"
            raise ParseError(f"database.yml must map environments (production, …) to settings; found {found}", span[0])
    return tree


def parse_helm_values(text: str) -> Tree:
    tree = load_templated_yaml(text)
    for root in tree.roots:
        runners = root.get("runners") if isinstance(root, dict) else None
        if isinstance(runners, dict) and isinstance(runners.get("config"), str):
            _embed_toml(tree, runners, "config", text.splitlines())
    return tree


def parse_compose(text: str) -> Tree:
    tree = load_templated_yaml(text)
    source = text.splitlines()
    for root in tree.roots:
        services = root.get("services") if isinstance(root, dict) else None
        for service in services.values() if isinstance(services, dict) else ():
            env = service.get("environment") if isinstance(service, dict) else None
            if isinstance(env, dict) and isinstance(env.get(OMNIBUS_CONFIG), str):
                _embed_gitlab_rb(tree, env[OMNIBUS_CONFIG], tree.table[id(env)][OMNIBUS_CONFIG][1], source)
            for i, item in enumerate(env if isinstance(env, list) else ()):
                if isinstance(item, str) and item.startswith(OMNIBUS_CONFIG + "="):
                    _embed_gitlab_rb(tree, item, tree.table[id(env)][i], source, len(OMNIBUS_CONFIG) + 1)
    return tree


def parse_k8s_manifest(text: str) -> Tree:
    tree = load_templated_yaml(text)
    source = text.splitlines()
    for root in tree.roots:
        for _, container in containers(root, ()):
            env = container.get("env")
            for item in env if isinstance(env, list) else ():
                if isinstance(item, dict) and item.get("name") == OMNIBUS_CONFIG and isinstance(item.get("value"), str):
                    _embed_gitlab_rb(tree, item["value"], tree.table[id(item)]["value"][1], source)
    return tree


def parse_env(text: str) -> Tree:
    tree = parse_env_file(text)
    env = tree.roots[0]
    if isinstance(env.get(OMNIBUS_CONFIG), str):
        _embed_gitlab_rb(tree, env[OMNIBUS_CONFIG], tree.table[id(env)][OMNIBUS_CONFIG][1], text.splitlines())
    return tree


def _mover(script: ScriptText, skip: int = 0) -> Move:
    """Spans in an embedded text (that starts `skip` characters into `script`) → spans in the file."""

    def move(span: Span) -> Span:
        line, col = script.position(span[0] - 1, span[1] - 1 + (skip if span[0] == 1 else 0))
        end_line, end_col = script.position(span[2] - 1, span[3] - 1 + (skip if span[2] == 1 else 0))
        return (line, col, end_line, end_col)

    return move


def _line(move: Move, line: int | None) -> int:
    """The file line of a line of the embedded text (a warning's)."""
    return move((line or 1, 1, line or 1, 1))[0]


def _move_table(sub: Tree, move: Move) -> dict[int, Any]:
    out: dict[int, Any] = {}
    for container_id, entry in sub.table.items():
        if isinstance(entry, list):
            out[container_id] = [move(s) for s in entry]
        else:
            out[container_id] = {k: (move(a), move(b)) for k, (a, b) in entry.items()}
    return out


def _embed_gitlab_rb(tree: Tree, value: str, span: Span, source: list[str], skip: int = 0) -> None:
    """Read `value[skip:]`, written at `span`, as an embedded `gitlab.rb` document."""
    from scanner.readers.settings.omnibus import parse_gitlab_rb

    move = _mover(map_lines(value, span, source), skip)
    try:
        sub = parse_gitlab_rb(value[skip:])
    except ParseError as exc:
        tree.warnings.append((_line(move, exc.line), f"{OMNIBUS_CONFIG}: {exc.message}"))
        return
    moved = Tree(sub.roots, [move(s) for s in sub.root_spans], _move_table(sub, move), sub.keys)
    tree.warnings.extend((_line(move, line), f"{OMNIBUS_CONFIG}: {message}") for line, message in sub.warnings)
    tree.embedded.append(("omnibus-config", moved))


_HELM_EXPR = re.compile(r"\{\{.*?\}\}")


def _untemplate_toml(text: str) -> str:
    """The chart renders `runners.config` with `tpl`, so it may hold Go template actions. Same-length
    stand-ins keep every position: a line of actions only (`{{- if … }}`, `{{- toToml … }}`) becomes
    blank; actions inside a string become private-use characters; from the first action outside a
    string to the line's last one becomes one string (`max = {{ .Values.n }}` → `max = "…"`). Each
    value that holds stand-ins gets its source text back afterwards (`_restore`)."""
    if "{{" not in text:
        return text
    out = []
    for line in text.split("\n"):
        found = list(_HELM_EXPR.finditer(line))
        if found and not _HELM_EXPR.sub("", line).strip():
            line = " " * len(line)
        bare = next((m for m in found if line[: m.start()].count('"') % 2 == 0), None) if line.strip() else None
        if bare is not None:
            a, b = bare.start(), found[-1].end()
            line = line[:a] + '"' + STANDINS[0] * (b - a - 2) + '"' + line[b:]
        out.append(_HELM_EXPR.sub(lambda m: STANDINS[0] * len(m.group()), line))
    return "\n".join(out)


def _embed_toml(tree: Tree, parent: dict[str, Any], key: str, source: list[str]) -> None:
    script = map_lines(parent[key], tree.table[id(parent)][key][1], source)
    move = _mover(script)
    try:
        sub = load_toml(_untemplate_toml(parent[key]))
    except ParseError as exc:
        tree.warnings.append((_line(move, exc.line), f"{key}: {exc.message}"))
        return
    _restore(sub, sub.roots[0], parent[key].split("\n"))
    tree.table.update(_move_table(sub, move))
    tree.keys.update(sub.keys)
    tree.warnings.extend((_line(move, line), f"{key}: {message}") for line, message in sub.warnings)
    parent[key] = sub.roots[0]


def _restore(sub: Tree, node: Any, lines: list[str]) -> None:
    """Put the template text back in each string value that holds stand-ins: `"{{ .Values.x }}"`
    is the string `{{ .Values.x }}`, as the templated YAML reader gives it."""
    spans = sub.table.get(id(node))
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for k, value in list(items):
        if isinstance(value, str) and STANDINS[0] in value and spans is not None:
            line, col, end_line, end_col = spans[k][1] if isinstance(node, dict) else spans[k]
            if line == end_line:
                text = lines[line - 1][col - 1 : end_col - 1]
                node[k] = text[1:-1] if len(text) > 1 and text[0] == text[-1] == '"' else text
        else:
            _restore(sub, value, lines)
