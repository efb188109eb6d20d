"""Templated settings the way fleets keep them — Ansible `.j2`, Chef `.erb`, Terraform `.tpl`, Helm `{{ }}`:
the kind from the name under the template suffix, tags neutralised, findings at their exact place, and what
cannot be read one notice per file, never a flood (scanner.readers.settings.untemplate)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scanner.core.tree import ParseError
from scanner.readers.settings.parsers import parse_omnibus, parse_runner_config
from scanner.readers.settings.untemplate import neutralize
from scanner.rules.policy import Policy

from conftest import assert_positions_inside, run_scan, where

ANSIBLE_RB = """\
external_url "{{ gitlab_external_url }}"
gitlab_rails['time_zone'] = "{{ gitlab_time_zone }}"
gitlab_rails['backup_keep_time'] = {{ gitlab_backup_keep_time }}
{% if gitlab_backup_upload %}
gitlab_rails['backup_upload_connection'] = { 'provider' => 'Rackspace', 'rackspace_username' => '{{ user }}' }
{% endif %}
nginx['redirect_http_to_https'] = {{ gitlab_redirect | lower }}
letsencrypt['contact_emails'] = {{ gitlab_letsencrypt_contact_emails | to_json }}
{# storages #}
git_data_dirs({"default" => {"path" => "{{ gitlab_git_data_dir }}"} })
{% for key, value in gitlab_extra_settings.items() %}
gitlab_rails['{{ key }}'] = {{ value | to_json }}
{% endfor %}
"""

CHEF_RB = """\
external_url '<%= @external_url %>'
<% if @pseudonymizer %>
gitlab_rails['pseudonymizer_manifest'] = '<%= @manifest %>'
<% end %>
<% @gitlab_rails.each do |config_key, option| %>
<%= "gitlab_rails['#{config_key}'] = #{print_config_option(option)}" %>
<% end %>
x = %{a Ruby string, not a template}
gitlab_rails['smtp_port'] = <%= @smtp_port %>
"""

RUNNER_J2 = """\
concurrent = {{ gitlab_runner_concurrent }}
{% if gitlab_runner_listen_address | length > 0 %}
listen_address = {{ gitlab_runner_listen_address | tojson }}
{% endif %}
{% for gitlab_runner in filled_runners %}
[[runners]]
  name = {{ gitlab_runner.name | tojson }}
  url = "{{ gitlab_runner.url | default("https://gitlab.com") }}"
  executor = "docker+machine"
{% for key, value in gitlab_runner.extra_configs.items() %}
  {{ key }} = {{ value | tojson }}
{% endfor %}
  [runners.machine]
    {{ gitlab_runner.machine_options | to_toml }}
    IdleCount = {{ idle }} {{ idle_extra }} broken
{% endfor %}
"""

TERRAFORM_TPL = """\
concurrent = ${runners_concurrent}
check_interval = 0
%{ if runners_enabled ~}
[[runners]]
  name = "${runners_name}"
  url = "${runners_url}"
  executor = "docker+machine"
  environment = ${runners_environment}
%{ endif ~}
"""

HELM_VALUES = """\
gitlabUrl: {{ .Values.gitlab.url }}
runnerRegistrationToken: "{{ .Values.registrationToken }}"
runners:
  config: |
    [[runners]]
      executor = "docker+machine"
      [runners.machine]
        IdleCount = {{ .Values.idle }}
"""

SHELL_TPL = """\
#!/bin/bash
cat > /etc/gitlab-runner/config.toml <<EOF
[[runners]]
  executor = "docker+machine"
EOF
"""


def _scan(tmp_path: Path, policies: list[Policy], files: dict[str, str]) -> tuple[
        list[tuple[str, int | None, str]], list[tuple[str, int | None, str]], set[tuple[str, str, int, int]]]:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    report = run_scan([tmp_path], policies)
    return ([(e.path, e.line, e.message) for e in report.errors],
            [(w.path, w.line, w.message) for w in report.warnings], where(report))


def test_templated_settings_are_read_where_fleets_keep_them(tmp_path: Path, policies: list[Policy]) -> None:
    errors, notices, found = _scan(tmp_path, policies, {
        "roles/gitlab/templates/gitlab.rb.j2": ANSIBLE_RB,
        "cookbooks/gitlab/templates/default/gitlab.rb.erb": CHEF_RB,
        "roles/runner/templates/config.toml.j2": RUNNER_J2,
        "modules/runner/template/runner-config.tpl": TERRAFORM_TPL,
        "modules/runner/template/user-data.tpl": SHELL_TPL,
        "charts/values.yaml.gotmpl": HELM_VALUES,
    })
    assert errors == []
    assert notices == [("roles/runner/templates/config.toml.j2", 15, "templated runner configuration: line 15 not "
                        "read (TOML not read: unexpected text after the value); the rest was checked")]
    assert found == {
        ("backup-upload-openstack-rackspace", "roles/gitlab/templates/gitlab.rb.j2", 5, 46),
        ("omnibus-git-data-dirs", "roles/gitlab/templates/gitlab.rb.j2", 10, 1),
        ("omnibus-pseudonymizer", "cookbooks/gitlab/templates/default/gitlab.rb.erb", 3, 14),
        ("runner-docker-machine-executor", "roles/runner/templates/config.toml.j2", 9, 3),
        ("runner-docker-machine-executor", "modules/runner/template/runner-config.tpl", 7, 3),
        ("runner-docker-machine-executor", "charts/values.yaml.gotmpl", 6, 7),
        ("runner-helm-registration-token", "charts/values.yaml.gotmpl", 2, 1),
    }


def test_a_value_that_held_a_tag_is_the_text_written_there() -> None:
    tree = parse_runner_config(RUNNER_J2)
    runner = tree.roots[0]["runners"][0]
    assert tree.roots[0]["concurrent"] == "{{ gitlab_runner_concurrent }}"
    assert runner["name"] == "{{ gitlab_runner.name | tojson }}"
    assert runner["url"] == '{{ gitlab_runner.url | default("https://gitlab.com") }}'
    assert runner["{{ key }}"] == "{{ value | tojson }}"  # a key from a tag: the tag
    assert tree.table[id(runner)]["url"] == ((8, 3, 8, 6), (8, 9, 8, 66))
    chef = parse_omnibus(CHEF_RB)
    rb = chef.roots[0]
    assert rb["external_url"] == "<%= @external_url %>"
    assert rb["gitlab_rails"]["smtp_port"] == "<%= @smtp_port %>"
    assert "x" not in rb and chef.warnings == chef.notices == []  # `x = %{…}`: a Ruby string, read as one


def test_a_broken_line_without_a_tag_is_still_an_input_error() -> None:
    tree = parse_runner_config("concurrent = {{ n }}\n[[runners]]\n  executor = docker\n  name = '{{ x }}'\n")
    assert tree.warnings == [(3, "TOML not read: expected a value")]
    assert tree.notices == []


def test_a_file_of_nothing_but_tags_says_so_once() -> None:
    text = "".join(f"{{{{ setting_{i} }}}} {{{{ value_{i} }}}} x\n" for i in range(300))
    try:
        tree = parse_runner_config(text)
    except ParseError as exc:
        assert exc.line == 1
        return
    assert len(tree.notices) <= 1 and tree.warnings == []


_PIECES = ["{{ x }}", "{% if a %}", "{% endif %}", "{# c #}", "<%= y %>", "<% end %>", "${v}", "%{ if z ~}",
           "%{hello}", "key = ", "[[runners]]", "[t]", '"', "'", "\\", "#", " ", "\n", "=", "gitlab_rails['a'] = ",
           "{", "}", "[", "]", ",", "x"]
_TEXT = st.one_of(st.text(max_size=200), st.lists(st.sampled_from(_PIECES), max_size=60).map("".join))


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(text=_TEXT)
def test_neutralising_keeps_every_position(text: str) -> None:
    neutral, _ = neutralize(text)
    assert len(neutral) == len(text)
    assert [len(line) for line in neutral.split("\n")] == [len(line) for line in text.split("\n")]


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(text=_TEXT)
def test_templated_readers_give_a_tree_or_a_parse_error_with_positions_inside(text: str) -> None:
    lines = text.count("\n") + 1
    for parse in (parse_runner_config, parse_omnibus):
        try:
            tree = parse(text)
        except ParseError as exc:
            assert exc.line is None or 1 <= exc.line <= lines
            continue
        assert_positions_inside(tree, lines)
        assert len(tree.notices) <= 1
