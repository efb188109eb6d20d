"""The kinds of document sunset reads, chosen in one explicit dict (`KINDS`).

A kind names its parser (text → `Tree` with positions), its evaluator (policies → hits, from
`scanner.rules.evaluate`) and, for files found by walking a directory, how it recognises them.
GitLab CI files are reached as pipeline roots and through includes (`scanner.core.files`), so
that kind claims nothing by itself. Parsers and extractors are imported on first use (inside the
small functions below), so the readers of kinds a scan never meets cost nothing at start-up.
What each kind carries for matchers to read is in `scanner.rules.facets`, in the same order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import chain
from pathlib import Path

from scanner.core.document import Document
from scanner.core.tree import Tree
from scanner.readers.api import detect as api
from scanner.readers.settings import detect as settings
from scanner.readers.shell import is_shell_script, parse_script
from scanner.readers.yamlrepair import read_yaml
from scanner.rules.evaluate import evaluate_calls, evaluate_ci, evaluate_settings, evaluate_shell, evaluate_text
from scanner.rules.facets import KIND_NAMES
from scanner.rules.hits import Hit
from scanner.rules.index import PolicyIndex


@dataclass(frozen=True, slots=True)
class Kind:
    name: str
    parse: Callable[[str], Tree]
    evaluate: Callable[[PolicyIndex, Document], Iterable[Hit]]
    claims: Callable[[Path], bool] | None = None


# Source files: parse checks what must hold; evaluation runs the API policies on extracted calls.
def _python(text: str) -> Tree:
    from scanner.readers.api.python.source import parse_python

    return parse_python(text)


def _graphql(text: str) -> Tree:
    from scanner.readers.api.graphql import parse_graphql

    return parse_graphql(text)


def _source(text: str) -> Tree:
    from scanner.readers.api.model import text_tree

    return text_tree(text)


def _python_calls(index: PolicyIndex, doc: Document) -> Iterator[Hit]:
    from scanner.readers.api.python import extract as python

    calls = evaluate_calls(index, python.extract(doc.text)) if index.api else iter(())
    return chain(evaluate_text(index, doc), calls)


def _graphql_calls(index: PolicyIndex, doc: Document) -> Iterator[Hit]:
    from scanner.readers.api.model import GraphqlText

    return evaluate_calls(index, [GraphqlText(doc.text)], strict=True) if index.of("graphql") else iter(())


def _js_calls(index: PolicyIndex, doc: Document) -> Iterator[Hit]:
    from scanner.readers.api import javascript

    calls = evaluate_calls(index, javascript.extract(doc.text)) if index.api else iter(())
    return chain(evaluate_text(index, doc), calls)


def _terraform_calls(index: PolicyIndex, doc: Document) -> Iterator[Hit]:
    from scanner.readers.api import terraform

    calls = evaluate_calls(index, list(terraform.extract(doc.text))) if index.api else iter(())
    return chain(evaluate_text(index, doc), calls)


def _ruby_calls(index: PolicyIndex, doc: Document) -> Iterator[Hit]:
    from scanner.readers.api import ruby

    calls = evaluate_calls(index, ruby.extract(doc.text)) if index.api else iter(())
    return chain(evaluate_text(index, doc), calls)


# Settings files (scanner.readers.settings; docs/settings.md).
def _gitlab_rb(text: str) -> Tree:
    from scanner.readers.settings.parsers import parse_omnibus

    return parse_omnibus(text)


def _templated_yaml(text: str) -> Tree:
    from scanner.readers.settings.templated import load_templated_yaml

    return load_templated_yaml(text)


def _toml(text: str) -> Tree:
    from scanner.readers.settings.parsers import parse_runner_config

    return parse_runner_config(text)


def _database_yml(text: str) -> Tree:
    from scanner.readers.settings.parsers import parse_database_yml

    return parse_database_yml(text)


def _helm_values(text: str) -> Tree:
    from scanner.readers.settings.parsers import parse_helm_values

    return parse_helm_values(text)


def _compose(text: str) -> Tree:
    from scanner.readers.settings.parsers import parse_compose

    return parse_compose(text)


def _dockerfile(text: str) -> Tree:
    from scanner.readers.settings.dockerfile import parse_dockerfile

    return parse_dockerfile(text)


def _env(text: str) -> Tree:
    from scanner.readers.settings.parsers import parse_env

    return parse_env(text)


def _env_file(text: str) -> Tree:
    from scanner.readers.settings.dockerfile import parse_env_file

    return parse_env_file(text)


def _k8s_manifest(text: str) -> Tree:
    from scanner.readers.settings.parsers import parse_k8s_manifest

    return parse_k8s_manifest(text)


KINDS: dict[str, Kind] = {
    "gitlab-ci": Kind("gitlab-ci", read_yaml, evaluate_ci),
    "shell-script": Kind("shell-script", parse_script, evaluate_shell, is_shell_script),
    "python-source": Kind("python-source", _python, _python_calls, api.is_python),
    "graphql": Kind("graphql", _graphql, _graphql_calls, api.is_graphql),
    "js-source": Kind("js-source", _source, _js_calls, api.is_js),
    "terraform": Kind("terraform", _source, _terraform_calls, api.is_terraform),
    "security-policy": Kind("security-policy", read_yaml, evaluate_settings, settings.is_security_policy),
    "agent-config": Kind("agent-config", read_yaml, evaluate_settings, settings.is_agent_config),
    "omnibus-config": Kind("omnibus-config", _gitlab_rb, evaluate_settings, settings.is_gitlab_rb),
    "gitlab-yml": Kind("gitlab-yml", _templated_yaml, evaluate_settings, settings.is_gitlab_yml),
    "database-yml": Kind("database-yml", _database_yml, evaluate_settings,
                         settings.is_database_yml),
    "runner-config": Kind("runner-config", _toml, evaluate_settings, settings.is_runner_config),
    "registry-config": Kind("registry-config", _templated_yaml, evaluate_settings, settings.is_registry_config),
    "helm-values": Kind("helm-values", _helm_values, evaluate_settings,
                        settings.is_helm_values),
    "compose": Kind("compose", _compose, evaluate_settings, settings.is_compose),
    "dockerfile": Kind("dockerfile", _dockerfile, evaluate_settings, settings.is_dockerfile),
    "env-file": Kind("env-file", _env, evaluate_settings, settings.is_env_file),
    "k8s-manifest": Kind("k8s-manifest", _k8s_manifest, evaluate_settings,
                         settings.is_k8s_manifest),
    # Files GitLab does not read, whose content its record names: build tool versions a scanner
    # supports, metric names GitLab exports (Prometheus rule files).
    "java-properties": Kind("java-properties", _env_file, evaluate_settings, settings.is_java_properties),
    "prometheus-rules": Kind("prometheus-rules", read_yaml, evaluate_settings, settings.is_prometheus_rules),
    "text-file": Kind("text-file", _source, evaluate_text, settings.is_text_file),
    # Last: a `gitlab.rb` is Omnibus settings, any other Ruby file a script that may call the API.
    "ruby-source": Kind("ruby-source", _source, _ruby_calls, api.is_ruby),
}

if tuple(KINDS) != KIND_NAMES:  # pragma: no cover - a developer error, caught by any test run
    raise RuntimeError(f"scanner.engine.kinds.KINDS {tuple(KINDS)} != scanner.rules.facets {KIND_NAMES}")


def claiming_kind(path: Path) -> Kind | None:
    """The first kind that recognises a file found by walking, if any."""
    for kind in KINDS.values():
        if kind.claims is not None and kind.claims(path):
            return kind
    return None
