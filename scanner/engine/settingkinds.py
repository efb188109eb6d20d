"""The settings document kinds' parts, as `scanner.engine.kinds.KINDS` names them: parse, evaluate, claims.

| kind              | files                                                    | parser                         |
|-------------------|----------------------------------------------------------|--------------------------------|
| `omnibus-config`  | `gitlab.rb` (and `gitlab.rb.template`, …)                | `omnibus.parse_gitlab_rb`      |
| `gitlab-yml`      | a source install's `config/gitlab.yml`                   | templated YAML                 |
| `database-yml`    | a source install's `config/database.yml`                 | templated YAML, a mapping      |
| `runner-config`   | GitLab Runner `config.toml`                              | `toml.load_toml`               |
| `registry-config` | container registry `config.yml`                          | templated YAML                 |
| `helm-values`     | Helm `values*.yaml` (runner, agent, GitLab charts)       | templated YAML + embedded TOML |
| `compose`         | `docker-compose*.yml`, `compose*.yaml`                   | templated YAML + gitlab.rb     |
| `dockerfile`      | `Dockerfile`, `Dockerfile.*`, `*.dockerfile`             | `dockerfile.parse_dockerfile`  |
| `env-file`        | `.env`, `.env.*`, `*.env`                                | `NAME=value` lines + gitlab.rb |
| `k8s-manifest`    | YAML opening with `apiVersion:` and `kind:`              | templated YAML + gitlab.rb     |
"""

from __future__ import annotations

from scanner.readers.settings.detect import (
    is_compose,
    is_database_yml,
    is_dockerfile,
    is_env_file,
    is_gitlab_rb,
    is_gitlab_yml,
    is_helm_values,
    is_k8s_manifest,
    is_registry_config,
    is_runner_config,
)
from scanner.readers.settings.dockerfile import parse_dockerfile, parse_env_file
from scanner.readers.settings.omnibus import parse_gitlab_rb
from scanner.readers.settings.parsers import (
    parse_compose,
    parse_database_yml,
    parse_env,
    parse_helm_values,
    parse_k8s_manifest,
)
from scanner.readers.settings.templated import load_templated_yaml as parse_yaml
from scanner.readers.settings.toml import load_toml as parse_toml
from scanner.rules.settingchecks import evaluate_settings as evaluate

__all__ = [
    "evaluate",
    "is_compose",
    "is_database_yml",
    "is_dockerfile",
    "is_env_file",
    "is_gitlab_rb",
    "is_gitlab_yml",
    "is_helm_values",
    "is_k8s_manifest",
    "is_registry_config",
    "is_runner_config",
    "parse_compose",
    "parse_database_yml",
    "parse_env",
    "parse_dockerfile",
    "parse_env_file",
    "parse_gitlab_rb",
    "parse_helm_values",
    "parse_k8s_manifest",
    "parse_toml",
    "parse_yaml",
]
