"""Templated YAML (ERB, `{{VAR}}`), the runner chart's embedded `config.toml`, `database.yml`
shapes, Dockerfiles and env files: values and exact positions."""

from __future__ import annotations

from pathlib import Path

import pytest

from scanner.core.tree import ParseError
from scanner.readers.settings.dockerfile import parse_dockerfile, parse_env_file
from scanner.readers.settings.parsers import parse_compose, parse_database_yml, parse_helm_values
from scanner.readers.settings.templated import load_templated_yaml
from scanner.rules.policy import Policy

from conftest import run_scan, where

GITLAB_YML = """\
production: &base
  gitlab:
    host: <%= ENV['GITLAB_HOST'] %>
    port: {{GITLAB_PORT}}
  <% if incoming %>
  incoming_email:
    enabled: {{INCOMING_ENABLED}}
    address: "gitlab+%{key}@{{DOMAIN}}"
    delivery_method: sidekiq
  <% end %>
<%= env %>:
  <<: *base
"""


def test_templates_are_kept_as_text_with_exact_positions() -> None:
    tree = load_templated_yaml(GITLAB_YML)
    root = tree.roots[0]
    production = root["production"]
    assert production["gitlab"] == {"host": "<%= ENV['GITLAB_HOST'] %>", "port": "{{GITLAB_PORT}}"}
    email = production["incoming_email"]
    assert email == {
        "enabled": "{{INCOMING_ENABLED}}",
        "address": "gitlab+%{key}@{{DOMAIN}}",
        "delivery_method": "sidekiq",
    }
    assert tree.table[id(production)]["incoming_email"][0] == (6, 3, 6, 17)
    assert tree.table[id(email)]["delivery_method"] == ((9, 5, 9, 20), (9, 22, 9, 29))
    assert tree.table[id(email)]["address"][1] == (8, 14, 8, 40)
    assert list(root) == ["production", "<%= env %>"]  # a templated key keeps its text
    assert root["<%= env %>"]["incoming_email"] is email  # merge keys share, never copy
    assert "<%= env %>" in tree.keys


def test_runner_chart_config_is_read_as_toml_at_its_place_in_the_values_file() -> None:
    text = (
        "gitlabUrl: https://gitlab.example.com\n"
        "runners:\n"
        "  config: |\n"
        "    [[runners]]\n"
        "      [runners.kubernetes]\n"
        '        namespace = "{{.Release.Namespace}}"\n'
        "        terminationGracePeriodSeconds = 60\n"
    )
    tree = parse_helm_values(text)
    config = tree.roots[0]["runners"]["config"]
    kubernetes = config["runners"][0]["kubernetes"]
    assert kubernetes == {"namespace": "{{.Release.Namespace}}", "terminationGracePeriodSeconds": 60}
    assert tree.table[id(kubernetes)]["terminationGracePeriodSeconds"] == ((7, 9, 7, 38), (7, 41, 7, 43))
    assert tree.table[id(config["runners"])] == [(4, 5, 4, 16)]
    assert "terminationGracePeriodSeconds" in tree.keys


def test_a_broken_embedded_config_is_a_warning_on_its_line() -> None:
    tree = parse_helm_values("runners:\n  config: |\n    [[runners]]\n      shell = = 1\n      executor = 'shell'\n")
    assert tree.warnings == [(4, "config: TOML not read: expected a value")]
    assert tree.roots[0]["runners"]["config"] == {"runners": [{"executor": "shell"}]}


def test_gitlab_omnibus_config_is_an_embedded_gitlab_rb_with_positions_in_the_compose_file() -> None:
    text = (
        "services:\n"
        "  gitlab:\n"
        "    environment:\n"
        "      GITLAB_OMNIBUS_CONFIG: |\n"
        "        external_url 'https://gitlab.example.com'\n"
        "        roles ['application_role'] if ENV['X'] == (\n"
        "        gitlab_rails['incoming_email_delivery_method'] = \"sidekiq\"\n"
        "  mail:\n"
        "    environment:\n"
        "      - GITLAB_OMNIBUS_CONFIG=gitlab_rails['smtp_enable'] = true\n"
    )
    tree = parse_compose(text)
    assert tree.warnings == [(6, "GITLAB_OMNIBUS_CONFIG: `(` opened here is never closed; this statement is not read")]
    assert [kind for kind, _ in tree.embedded] == ["omnibus-config", "omnibus-config"]
    first, second = (inner.roots[0] for _, inner in tree.embedded)
    rails = first["gitlab_rails"]
    assert rails == {"incoming_email_delivery_method": "sidekiq"}
    assert tree.embedded[0][1].table[id(rails)]["incoming_email_delivery_method"][0] == (7, 22, 7, 54)
    assert second["gitlab_rails"] == {"smtp_enable": True}
    assert tree.embedded[1][1].table[id(second["gitlab_rails"])]["smtp_enable"][0] == (10, 44, 10, 57)


@pytest.mark.parametrize(
    ("text", "found"),
    [("- production\n- development\n", "a list"), ("production\n", "a single value")],
)
def test_a_database_yml_that_is_not_a_mapping_is_a_parse_error(text: str, found: str) -> None:
    with pytest.raises(ParseError) as err:
        parse_database_yml(text)
    assert err.value.message == f"database.yml must map environments (production, …) to settings; found {found}"
    assert err.value.line == 1


def test_a_database_yml_that_is_a_list_is_reported_and_the_rest_is_scanned(
    tmp_path: Path, policies: list[Policy]
) -> None:
    (tmp_path / "a" / "config").mkdir(parents=True)
    (tmp_path / "a" / "config" / "database.yml").write_text("# gitlab\n- main\n- ci\n")
    (tmp_path / "b" / "config").mkdir(parents=True)
    (tmp_path / "b" / "config" / "database.yml").write_text("production:\n  main:\n    database: gitlabhq_production\n")
    report = run_scan([tmp_path], policies)
    assert [(e.path, e.line) for e in report.errors] == [("a/config/database.yml", 2)]
    assert where(report) == {("database-ci-section", "b/config/database.yml", 1, 1)}


DOCKERFILE = """\
FROM gitlab/gitlab-runner:v17.11.0 AS runner
ENV REGISTRATION_TOKEN=abc \\
    RUNNER_SHELL="cmd"
ENV LEGACY_NAME legacy value
RUN gitlab-runner register \\
      # a comment line inside the continuation
      --shell cmd
CMD ["register", "--non-interactive"]
"""


def test_dockerfile_instructions_with_positions() -> None:
    tree = parse_dockerfile(DOCKERFILE)
    root = tree.roots[0]
    assert [next(iter(item)) for item in root] == ["FROM", "ENV", "ENV", "RUN", "CMD"]
    assert root[0]["FROM"] == "gitlab/gitlab-runner:v17.11.0"
    env = root[1]["ENV"]
    assert env == {"REGISTRATION_TOKEN": "abc", "RUNNER_SHELL": "cmd"}
    assert tree.table[id(env)]["RUNNER_SHELL"] == ((3, 5, 3, 17), (3, 18, 3, 23))
    assert root[2]["ENV"] == {"LEGACY_NAME": "legacy value"}
    assert tree.table[id(root[3])]["RUN"] == ((5, 1, 5, 4), (5, 5, 7, 18))
    assert root[4]["CMD"] == ["register", "--non-interactive"]
    assert tree.table[id(root[4]["CMD"])] == [(8, 6, 8, 16), (8, 18, 8, 37)]


def test_env_file_names_and_values() -> None:
    tree = parse_env_file('# comment\nexport A=1\nB="x y" # note\nC=plain # note\nnot a line\n')
    assert tree.roots[0] == {"A": "1", "B": "x y", "C": "plain"}
    assert tree.table[id(tree.roots[0])]["B"] == ((3, 1, 3, 2), (3, 3, 3, 8))
    assert tree.warnings == [(5, "not a `NAME=value` line")]


def test_a_file_named_like_an_env_file_with_no_assignment_is_a_parse_error() -> None:
    with pytest.raises(ParseError) as err:
        parse_env_file("if [ -n \"$X\" ]; then\n  echo hi\nfi\n")
    assert (err.value.line, err.value.message) == (1, "not an env file: not a `NAME=value` line")
