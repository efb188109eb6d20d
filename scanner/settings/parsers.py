"""The parse function of each settings kind (text → `Tree`), built from the readers beside it.

Two kinds add something to plain (templated) YAML:

* `database.yml` must map environment names to settings; a list or a scalar there is an
  input error for that file.
* In the GitLab Runner Helm chart, `runners.config` is a `config.toml` written as a YAML block.
  It is read as TOML and put in the tree in place of the string, with every position mapped
  back to the values file, so `runners.config.runners[0].kubernetes.…` has an exact line.
"""

from __future__ import annotations

from typing import Any

from scanner.settings.templated import load_templated_yaml
from scanner.settings.toml import load_toml
from scanner.shell import map_lines
from scanner.tree import ParseError, Span, Tree


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


def _embed_toml(tree: Tree, parent: dict[str, Any], key: str, source: list[str]) -> None:
    spans = tree.table[id(parent)]
    script = map_lines(parent[key], spans[key][1], source)

    def move(span: Span) -> Span:
        (line, col), (end_line, end_col) = script.position(span[0] - 1, 0), script.position(span[2] - 1, 0)
        return (line, col + span[1] - 1, end_line, end_col + span[3] - 1)

    try:
        sub = load_toml(parent[key])
    except ParseError as exc:
        tree.warnings.append((script.position((exc.line or 1) - 1, 0)[0], f"{key}: {exc.message}"))
        return
    for container_id, entry in sub.table.items():
        if isinstance(entry, list):
            tree.table[container_id] = [move(s) for s in entry]
        else:
            tree.table[container_id] = {k: (move(a), move(b)) for k, (a, b) in entry.items()}
    tree.keys.update(sub.keys)
    tree.warnings.extend(
        (script.position((line or 1) - 1, 0)[0], f"{key}: {message}") for line, message in sub.warnings
    )
    parent[key] = sub.roots[0]
