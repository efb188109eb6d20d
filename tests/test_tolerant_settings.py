"""gitlab.rb and config.toml with broken lines: one input error per broken statement or line, naming it,
and every finding of the rest of the file still reported at its own line and column."""

from __future__ import annotations

from pathlib import Path

from scanner.rules.policy import Policy

from conftest import run_scan, where


def _scan(tmp_path: Path, policies: list[Policy], files: dict[str, str]) -> tuple[list[tuple[str, int | None, str]],
                                                                                set[tuple[str, str, int, int]]]:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    report = run_scan([tmp_path], policies)
    return [(e.path, e.line, e.message) for e in report.errors], where(report)


def test_gitlab_rb_reads_past_broken_statements(tmp_path: Path, policies: list[Policy]) -> None:
    errors, found = _scan(tmp_path, policies, {"etc/gitlab/gitlab.rb": (
        "external_url 'https://gitlab.example.com'\n"
        "gitlab_rails['omniauth_providers'] = [\n"                                  # 2: never closed
        "  { name: 'cas3', label: 'CAS' },\n"
        "gitlab_rails['backup_upload_connection'] = { 'provider' => 'Rackspace' }\n"  # 4
        "gitlab_rails['smtp_address'] = 'smtp.example.com\n"                        # 5: unterminated
        "if node['fqdn'] == 'gitlab-1'\n"
        "  gitlab_rails['ldap_servers'] = {\n"                                      # 7: never closed
        "  gitlab_rails['pseudonymizer_manifest'] = 'config/pseudonymizer.yml'\n"   # 8
        "end\n"
        "git_data_dirs({ 'default' => { 'path' => '/var/opt/gitlab/git-data' } })\n"  # 10
    )})
    assert errors == [
        ("etc/gitlab/gitlab.rb", 2, "`[` opened here is never closed; this statement is not read"),
        ("etc/gitlab/gitlab.rb", 5, "unterminated string; the rest of this line is not read"),
        ("etc/gitlab/gitlab.rb", 7, "`{` opened here is never closed; this statement is not read"),
    ]
    assert found == {
        ("backup-upload-openstack-rackspace", "etc/gitlab/gitlab.rb", 4, 46),
        ("omnibus-pseudonymizer", "etc/gitlab/gitlab.rb", 8, 16),
        ("omnibus-git-data-dirs", "etc/gitlab/gitlab.rb", 10, 1),
    }


def test_runner_config_reads_past_broken_lines(tmp_path: Path, policies: list[Policy]) -> None:
    errors, found = _scan(tmp_path, policies, {"runner/config.toml": (
        "concurrent = 4\n"
        "[[runners]]\n"
        "  name = \"one\"\n"
        "  executor = docker\n"                          # 4: a bare word
        "  [runners.docker]\n"
        "    pull_policy = \"always\n"                   # 6: unterminated
        "[[runners]]\n"
        "  name = \"two\"\n"
        "  executor = \"docker+machine\"\n"              # 9
    )})
    assert errors == [("runner/config.toml", 4, "TOML not read: expected a value"),
                      ("runner/config.toml", 6, "TOML not read: unterminated string")]
    assert found == {("runner-docker-machine-executor", "runner/config.toml", 9, 3)}


def test_recognition_reads_past_a_long_header_and_a_byte_order_mark(tmp_path: Path, policies: list[Policy]) -> None:
    """Issue 27: a gitlab.rb was recognised from its first 8 KB only; a manifest opening with a BOM was skipped."""
    errors, found = _scan(tmp_path, policies, {
        "etc/gitlab/gitlab.rb": "# a header of comments\n" * 3000 + "git_data_dirs({'default' => {'path' => '/x'}})\n",
        "k8s/runner.yaml": "\ufeffapiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n"
                           "      containers:\n        - name: runner\n"
                           "          image: gitlab/gitlab-runner:alpine3.12\n",
    })
    assert errors == []
    assert found == {("omnibus-git-data-dirs", "etc/gitlab/gitlab.rb", 3001, 1),
                     ("runner-alpine-3-12-to-3-14-images", "k8s/runner.yaml", 8, 11)}
