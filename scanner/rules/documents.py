"""The kinds of document sunset reads, one record each in one explicit dict (`KINDS`).

A kind names its parser (text → `Tree` with positions), how it recognises a file found by walking a
folder (`claims`), and the facets it carries for matchers to read (`scanner.rules.facets`), in the
order they are evaluated: a location two matchers of one policy reach is reported once, with what
the first one matched. A kind with scripts or calls names the function that finds them.

GitLab CI files are reached as pipeline roots and through includes (`scanner.core.files`), so that
kind claims nothing by itself. The order of the dict is the order kinds are tried when recognising
a file. A policy that does not name its document kinds (`applies_to`) applies to every kind carrying
a facet its matcher kind applies to (`scanner.rules.kind.MatcherKind.default_facets`): a new
language is its reader, its recognition and one row here — no policy file changes.

Parsers and extractors are named as `module:function` and imported on first use (`Lazy`): the
readers of kinds a scan never meets cost nothing at start-up.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from scanner.core.tree import Tree
from scanner.readers.api import detect as api
from scanner.readers.settings import detect as settings
from scanner.readers.shell import is_shell_script, parse_script
from scanner.readers.yamlrepair import read_yaml
from scanner.rules.facets import CallsOf, ScriptsOf, ci_scripts, graphql_file, shell_script


class Lazy:
    """A function named `module:function`; its module is imported on the first call, and the function
    looked up there on every call (as a call through the module would)."""

    __slots__ = ("target", "_module")

    def __init__(self, target: str) -> None:
        self.target = target
        self._module: ModuleType | None = None

    def __call__(self, *args: Any) -> Any:
        module, _, name = self.target.partition(":")
        if self._module is None:
            self._module = importlib.import_module(module)
        return getattr(self._module, name)(*args)

    def __repr__(self) -> str:
        return f"Lazy({self.target!r})"


@dataclass(frozen=True, slots=True)
class DocumentKind:
    name: str
    parse: Callable[[str], Tree]
    facets: tuple[str, ...]
    claims: Callable[[Path], bool] | None = None
    scripts: ScriptsOf | None = None  # its script items (the `scripts` facet)
    calls: CallsOf | None = None  # the REST calls and GraphQL documents its reader extracts
    # Kinds whose policies apply to this one too: an Ansible task's commands are shell commands.
    policies_of: tuple[str, ...] = ()

    def takes(self, applies_to: Iterable[str]) -> bool:
        """A policy naming these kinds (`applies_to`) applies to this one."""
        return any(name == self.name or name in self.policies_of for name in applies_to)


_CI = ("ci-includes", "ci-variables", "tree", "scripts", "script-calls", "ci-jobs", "text")
_SETTINGS = ("tree", "settings-tree", "settings-env")
_RUNS = (*_SETTINGS, "settings-commands")  # settings files that run commands
_SOURCE = ("text", "rest-calls", "graphql-documents")
_TEXT = Lazy("scanner.readers.api.model:text_tree")
_TEMPLATED_YAML = Lazy("scanner.readers.settings.templated:load_templated_yaml")


def _shell_file(path: Path) -> bool:
    """A shell script, or a template of one (Terraform's `user-data.sh.tpl`, `gitlab-runner.tpl`)."""
    return is_shell_script(path) or settings.is_shell_template(path)


def _kinds(*kinds: DocumentKind) -> dict[str, DocumentKind]:
    return {kind.name: kind for kind in kinds}


KINDS: dict[str, DocumentKind] = _kinds(
    DocumentKind("gitlab-ci", read_yaml, _CI, scripts=ci_scripts),
    DocumentKind("shell-script", parse_script, ("text", "scripts", "script-calls"),
                 _shell_file, scripts=shell_script),
    DocumentKind("python-source", Lazy("scanner.readers.api.python.source:parse_python"), _SOURCE, api.is_python,
                 calls=Lazy("scanner.readers.api.python.extract:extract")),
    DocumentKind("graphql", Lazy("scanner.readers.api.graphql:parse_graphql"), ("graphql-documents",), api.is_graphql,
                 calls=graphql_file),
    DocumentKind("js-source", _TEXT, _SOURCE, api.is_js, calls=Lazy("scanner.readers.api.javascript:extract")),
    # Terraform resources stand for a few REST calls only (`gitlab_runner`, …): the policies on those
    # endpoints name it in `applies_to`.
    # A `helm_release` of GitLab's charts carries its values as an embedded Helm values document; the
    # scripts in its heredocs (start-up scripts, provisioners) are read as shell.
    DocumentKind("terraform", Lazy("scanner.readers.settings.parsers:parse_terraform"),
                 ("text", "terraform-resources", "scripts"), api.is_terraform,
                 scripts=Lazy("scanner.readers.api.terraform:scripts"),
                 calls=Lazy("scanner.readers.api.terraform:extract")),
    # GitLab's own YAML files read by jsonpath policies that name them (a policy project's
    # `.gitlab/security-policies/*.yml`, an agent's `.gitlab/agents/<name>/config.yaml`).
    DocumentKind("security-policy", read_yaml, ("tree",), settings.is_security_policy),
    DocumentKind("agent-config", read_yaml, ("tree",), settings.is_agent_config),
    # Auto DevOps's values for its Auto Deploy chart: Helm values, and what the record names in them.
    DocumentKind("auto-deploy-values", Lazy("scanner.readers.settings.parsers:parse_helm_values"), _SETTINGS,
                 settings.is_auto_deploy_values, policies_of=("helm-values",)),
    # Settings files (scanner.readers.settings; docs/settings.md).
    DocumentKind("omnibus-config", Lazy("scanner.readers.settings.parsers:parse_omnibus"), _SETTINGS,
                 settings.is_gitlab_rb),
    DocumentKind("gitlab-yml", _TEMPLATED_YAML, _SETTINGS, settings.is_gitlab_yml),
    DocumentKind("database-yml", Lazy("scanner.readers.settings.parsers:parse_database_yml"), _SETTINGS,
                 settings.is_database_yml),
    DocumentKind("runner-config", Lazy("scanner.readers.settings.parsers:parse_runner_config"), _SETTINGS,
                 settings.is_runner_config),
    DocumentKind("registry-config", _TEMPLATED_YAML, _SETTINGS, settings.is_registry_config),
    DocumentKind("helm-values", Lazy("scanner.readers.settings.parsers:parse_helm_values"), _SETTINGS,
                 settings.is_helm_values),
    DocumentKind("compose", Lazy("scanner.readers.settings.parsers:parse_compose"), _RUNS, settings.is_compose),
    DocumentKind("dockerfile", Lazy("scanner.readers.settings.dockerfile:parse_dockerfile"), _RUNS,
                 settings.is_dockerfile),
    DocumentKind("env-file", Lazy("scanner.readers.settings.parsers:parse_env"), _SETTINGS, settings.is_env_file),
    DocumentKind("k8s-manifest", Lazy("scanner.readers.settings.parsers:parse_k8s_manifest"), _RUNS,
                 settings.is_k8s_manifest),
    # Ansible task files and playbooks: their tasks' commands (`command:`, `shell:`, a container's),
    # read as shell; the policies of shell scripts apply (scanner.readers.ansible).
    DocumentKind("ansible", Lazy("scanner.readers.ansible:parse_ansible"), ("scripts", "script-calls"),
                 Lazy("scanner.readers.ansible:is_ansible"), scripts=Lazy("scanner.readers.ansible:ansible_scripts"),
                 policies_of=("shell-script",)),
    # Files GitLab does not read, whose content its record names, read by jsonpath policies that name
    # them: build tool versions a scanner supports (`sbt.version`, a Maven wrapper's `distributionUrl`),
    # metric names GitLab exports (a Prometheus rule's `expr`).
    DocumentKind("java-properties", Lazy("scanner.readers.settings.dockerfile:parse_env_file"), ("tree",),
                 settings.is_java_properties),
    DocumentKind("prometheus-rules", read_yaml, ("tree",), settings.is_prometheus_rules),
    # `*.csproj`, `Godeps/Godeps.json`, `*.html`: read as text only.
    DocumentKind("text-file", _TEXT, ("text",), settings.is_text_file),
    # Last: a `gitlab.rb` is Omnibus settings, any other Ruby file a script that may call the API.
    DocumentKind("ruby-source", _TEXT, _SOURCE, api.is_ruby, calls=Lazy("scanner.readers.api.ruby:extract")),
)


def claiming_kind(path: Path) -> DocumentKind | None:
    """The first kind that recognises a file found by walking, if any."""
    for kind in KINDS.values():
        if kind.claims is not None and kind.claims(path):
            return kind
    return None


def derived_kinds(facets: frozenset[str]) -> tuple[str, ...]:
    """The document kinds carrying any of these facets, in table order. A kind taking another's policies
    (`policies_of`) is left out: it carries no facet that kind does not, and gets them through it."""
    return tuple(name for name, kind in KINDS.items() if not kind.policies_of and facets.intersection(kind.facets))


def check_kind_names(names: Iterable[str]) -> None:
    """A policy's `applies_to` and `.sunset.yml`'s `kinds:` name document kinds that exist."""
    unknown = [name for name in names if name not in KINDS]
    if unknown:
        raise ValueError(f"unknown document kind {unknown[0]!r}; known: {', '.join(KINDS)}")
