"""The kinds of document sunset reads, chosen in one explicit dict.

A kind names its parser (text → `Tree` with positions), its evaluator (policies → hits) and,
for files found by walking a directory, how it recognises them. GitLab CI files are reached
as pipeline roots and through includes (`scanner.core.files.pipeline_roots`), so that kind
claims nothing by itself.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scanner.core.document import Document
from scanner.core.tree import Tree
from scanner.readers.api import detect as api
from scanner.readers.settings import detect as settings
from scanner.readers.shell import is_shell_script, parse_script
from scanner.readers.yamldoc import load_yaml
from scanner.rules.hits import Hit
from scanner.rules.match import PolicyIndex, evaluate_ci, evaluate_shell
from scanner.rules.policy import KIND_NAMES


class _Lazy:
    """A function imported on its first call, so the parsers of kinds a scan never meets cost
    nothing at start-up (`sunset scan` of one CI file stays fast)."""

    __slots__ = ("ref", "_fn")

    def __init__(self, ref: str) -> None:
        self.ref = ref
        self._fn: Callable[..., Any] | None = None

    def __call__(self, *args: Any) -> Any:
        if self._fn is None:
            module, name = self.ref.split(":")
            self._fn = getattr(importlib.import_module(module), name)
        return self._fn(*args)


_API = "scanner.engine.apikinds:"
_SET = "scanner.engine.settingkinds:"
_SETTINGS_EVAL = _Lazy(_SET + "evaluate")


@dataclass(frozen=True, slots=True)
class Kind:
    name: str
    parse: Callable[[str], Tree]
    evaluate: Callable[[PolicyIndex, Document], Iterable[Hit]]
    claims: Callable[[Path], bool] | None = None


KINDS: dict[str, Kind] = {
    "gitlab-ci": Kind("gitlab-ci", load_yaml, evaluate_ci),
    "shell-script": Kind("shell-script", parse_script, evaluate_shell, is_shell_script),
    "python-source": Kind(
        "python-source", _Lazy(_API + "parse_python"), _Lazy(_API + "evaluate_python"), api.is_python
    ),
    "graphql": Kind("graphql", _Lazy(_API + "parse_graphql"), _Lazy(_API + "evaluate_graphql"), api.is_graphql),
    "js-source": Kind("js-source", _Lazy(_API + "parse_text"), _Lazy(_API + "evaluate_js"), api.is_js),
    "terraform": Kind("terraform", _Lazy(_API + "parse_text"), _Lazy(_API + "evaluate_terraform"), api.is_terraform),
    # Instance, runner, registry and agent settings (scanner.readers.settings; docs/settings.md)
    "omnibus-config": Kind("omnibus-config", _Lazy(_SET + "parse_gitlab_rb"), _SETTINGS_EVAL, settings.is_gitlab_rb),
    "gitlab-yml": Kind("gitlab-yml", _Lazy(_SET + "parse_yaml"), _SETTINGS_EVAL, settings.is_gitlab_yml),
    "database-yml": Kind("database-yml", _Lazy(_SET + "parse_database_yml"), _SETTINGS_EVAL, settings.is_database_yml),
    "runner-config": Kind("runner-config", _Lazy(_SET + "parse_toml"), _SETTINGS_EVAL, settings.is_runner_config),
    "registry-config": Kind(
        "registry-config", _Lazy(_SET + "parse_yaml"), _SETTINGS_EVAL, settings.is_registry_config
    ),
    "helm-values": Kind("helm-values", _Lazy(_SET + "parse_helm_values"), _SETTINGS_EVAL, settings.is_helm_values),
    "compose": Kind("compose", _Lazy(_SET + "parse_compose"), _SETTINGS_EVAL, settings.is_compose),
    "dockerfile": Kind("dockerfile", _Lazy(_SET + "parse_dockerfile"), _SETTINGS_EVAL, settings.is_dockerfile),
    "env-file": Kind("env-file", _Lazy(_SET + "parse_env"), _SETTINGS_EVAL, settings.is_env_file),
    "k8s-manifest": Kind("k8s-manifest", _Lazy(_SET + "parse_k8s_manifest"), _SETTINGS_EVAL, settings.is_k8s_manifest),
    # Last: a `gitlab.rb` is Omnibus settings, any other Ruby file a script that may call the API.
    "ruby-source": Kind("ruby-source", _Lazy(_API + "parse_text"), _Lazy(_API + "evaluate_ruby"), api.is_ruby),
}

if tuple(KINDS) != KIND_NAMES:  # pragma: no cover - a developer error, caught by any test run
    raise RuntimeError(f"scanner.engine.kinds.KINDS {tuple(KINDS)} != scanner.rules.policy.KIND_NAMES {KIND_NAMES}")


def claiming_kind(path: Path) -> Kind | None:
    """The first kind that recognises a file found by walking, if any."""
    for kind in KINDS.values():
        if kind.claims is not None and kind.claims(path):
            return kind
    return None
