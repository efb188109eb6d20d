"""The kinds of document sunset reads, chosen in one explicit dict.

A kind names its parser (text → `Tree` with positions), its evaluator (policies → hits) and,
for files found by walking a directory, how it recognises them. GitLab CI files are reached
as pipeline roots and through includes (`scanner.discover.pipeline_roots`), so that kind
claims nothing by itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from scanner.api import kinds as api
from scanner.document import Document
from scanner.hits import Hit
from scanner.match import PolicyIndex, evaluate_ci, evaluate_shell
from scanner.policy import KIND_NAMES
from scanner.settings import kinds as settings
from scanner.shell import is_shell_script, parse_script
from scanner.tree import Tree
from scanner.yamldoc import load_yaml


@dataclass(frozen=True, slots=True)
class Kind:
    name: str
    parse: Callable[[str], Tree]
    evaluate: Callable[[PolicyIndex, Document], Iterable[Hit]]
    claims: Callable[[Path], bool] | None = None


KINDS: dict[str, Kind] = {
    "gitlab-ci": Kind("gitlab-ci", load_yaml, evaluate_ci),
    "shell-script": Kind("shell-script", parse_script, evaluate_shell, is_shell_script),
    "python-source": Kind("python-source", api.parse_python, api.evaluate_python, api.is_python),
    "graphql": Kind("graphql", api.parse_graphql, api.evaluate_graphql, api.is_graphql),
    "js-source": Kind("js-source", api.parse_text, api.evaluate_js, api.is_js),
    "terraform": Kind("terraform", api.parse_text, api.evaluate_terraform, api.is_terraform),
    # Instance, runner, registry and agent settings (scanner.settings; docs/settings.md)
    "omnibus-config": Kind("omnibus-config", settings.parse_gitlab_rb, settings.evaluate, settings.is_gitlab_rb),
    "gitlab-yml": Kind("gitlab-yml", settings.parse_yaml, settings.evaluate, settings.is_gitlab_yml),
    "database-yml": Kind("database-yml", settings.parse_database_yml, settings.evaluate, settings.is_database_yml),
    "runner-config": Kind("runner-config", settings.parse_toml, settings.evaluate, settings.is_runner_config),
    "registry-config": Kind("registry-config", settings.parse_yaml, settings.evaluate, settings.is_registry_config),
    "helm-values": Kind("helm-values", settings.parse_helm_values, settings.evaluate, settings.is_helm_values),
    "compose": Kind("compose", settings.parse_yaml, settings.evaluate, settings.is_compose),
    "dockerfile": Kind("dockerfile", settings.parse_dockerfile, settings.evaluate, settings.is_dockerfile),
    "env-file": Kind("env-file", settings.parse_env_file, settings.evaluate, settings.is_env_file),
    "k8s-manifest": Kind("k8s-manifest", settings.parse_yaml, settings.evaluate, settings.is_k8s_manifest),
}

if tuple(KINDS) != KIND_NAMES:  # pragma: no cover - a developer error, caught by any test run
    raise RuntimeError(f"scanner.kinds.KINDS {tuple(KINDS)} != scanner.policy.KIND_NAMES {KIND_NAMES}")


def claiming_kind(path: Path) -> Kind | None:
    """The first kind that recognises a file found by walking, if any."""
    for kind in KINDS.values():
        if kind.claims is not None and kind.claims(path):
            return kind
    return None
