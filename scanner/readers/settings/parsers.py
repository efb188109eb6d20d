"""The parse function of each settings kind (text → `Tree`), built from the readers beside it.

Some kinds add something to what their reader gives:

* `database.yml` must map environment names to settings; a list or a scalar there is an
  input error for that file.
* In the GitLab Runner Helm chart, `runners.config` is a `config.toml` written as a YAML block.
  It is read as TOML (Go template actions as `untemplate` reads them) and put in the tree in place
  of the string, with every position mapped back to the values file, so
  `runners.config.runners[0].kubernetes.…` has an exact line.
* `GITLAB_OMNIBUS_CONFIG` (the Omnibus image reads it as `gitlab.rb` settings) set by a compose
  service, a Kubernetes container or an env file is parsed as `gitlab.rb`, positions mapped back
  likewise, and kept as an embedded `omnibus-config` document (`Tree.embedded`), which the
  Omnibus policies check.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from scanner.core.lines import split_lines
from scanner.core.tree import ParseError, Span, Tree
from scanner.readers.settings import untemplate
from scanner.readers.settings.dockerfile import parse_env_file
from scanner.readers.settings.templated import load_templated_yaml
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
    _runner_config(tree, split_lines(text))
    return tree


def _runner_config(tree: Tree, source: list[str]) -> None:
    """The runner chart's `runners.config`, read as TOML in place."""
    for root in tree.roots:
        runners = root.get("runners") if isinstance(root, dict) else None
        if isinstance(runners, dict) and isinstance(runners.get("config"), str):
            _embed_toml(tree, runners, "config", source)


def parse_terraform(text: str) -> Tree:
    """A Terraform file as text (its API calls are the API readers'), with the values of each
    `helm_release` of a GitLab chart as an embedded Helm values document (`helmrelease`)."""
    from scanner.readers.api.model import text_tree
    from scanner.readers.settings.helmrelease import releases

    tree = text_tree(text)
    if "helm_release" not in text:
        return tree
    found, problems = releases(text)
    tree.warnings.extend(problems)
    source = split_lines(text)
    for values in found:
        _runner_config(values, source)
        tree.embedded.append(("helm-values", values))
    return tree


def parse_compose(text: str) -> Tree:
    tree = load_templated_yaml(text)
    source = split_lines(text)
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
    source = split_lines(text)
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
        _embed_gitlab_rb(tree, env[OMNIBUS_CONFIG], tree.table[id(env)][OMNIBUS_CONFIG][1], split_lines(text))
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
    """Read `value[skip:]`, written at `span`, as an embedded `gitlab.rb` document (`${VAR}` of compose
    and Helm `{{ }}` read as `untemplate` reads them)."""
    move = _mover(map_lines(value, span, source), skip)
    try:
        sub = parse_omnibus(value[skip:])
    except ParseError as exc:
        tree.warnings.append((_line(move, exc.line), f"{OMNIBUS_CONFIG}: {exc.message}"))
        return
    moved = Tree(sub.roots, [move(s) for s in sub.root_spans], _move_table(sub, move), sub.keys)
    tree.warnings.extend((_line(move, line), f"{OMNIBUS_CONFIG}: {message}") for line, message in sub.warnings)
    tree.notices.extend((_line(move, line), f"{OMNIBUS_CONFIG}: {message}") for line, message in sub.notices)
    tree.embedded.append(("omnibus-config", moved))


def _embed_toml(tree: Tree, parent: dict[str, Any], key: str, source: list[str]) -> None:
    """The chart renders `runners.config` with `tpl`: Go template actions are read as `untemplate` reads
    them, and what still cannot be read is one notice."""
    script = map_lines(parent[key], tree.table[id(parent)][key][1], source)
    move = _mover(script)
    try:
        sub = untemplate.read(parent[key], load_toml, key)
    except ParseError as exc:
        tree.warnings.append((_line(move, exc.line), f"{key}: {exc.message}"))
        return
    tree.table.update(_move_table(sub, move))
    tree.keys.update(sub.keys)
    tree.warnings.extend((_line(move, line), f"{key}: {message}") for line, message in sub.warnings)
    tree.notices.extend((_line(move, line), message) for line, message in sub.notices)
    parent[key] = sub.roots[0]


def parse_runner_config(text: str) -> Tree:
    """A runner's `config.toml`, templated or not (`config.toml.j2`, a Terraform `runner-config.tpl`)."""
    return untemplate.read(text, load_toml, "runner configuration")


def parse_omnibus(text: str) -> Tree:
    """A `gitlab.rb`, templated or not (`gitlab.rb.j2`, Chef's `gitlab.rb.erb`)."""
    from scanner.readers.settings.omnibus import parse_gitlab_rb

    return untemplate.read(text, parse_gitlab_rb, "gitlab.rb")
