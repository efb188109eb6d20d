"""Secrets never leak: settings files full of passwords and tokens, scanned in every output
format, print none of them, whether in a finding's snippet, its message or an input error."""

from __future__ import annotations

from pathlib import Path

import pytest

from scanner.cli import main

ROOT = Path(__file__).resolve().parent.parent
FORMATS = ("text", "json", "sarif", "codequality", "markdown")

FILES = {
    "etc/gitlab/gitlab.rb": (
        "gitlab_rails['initial_root_password'] = 'S3CRET-root-password'\n"
        "gitlab_rails['initial_shared_runners_registration_token'] = \"S3CRET-shared-token\"\n"
        "gitlab_rails['incoming_email_password'] = \"S3CRET imap password with spaces\"\n"
        "gitlab_rails['incoming_email_delivery_method'] = 'sidekiq'; gitlab_rails['db_password'] = 'S3CRET-db'\n"
        "gitlab_rails['service_desk_email_secret_file'] = '/etc/gitlab/sd_secret'\n"
        "registry['notifications'] = [{ 'name' => 'n', 'threshold' => 5, "
        "'headers' => { 'Authorization' => ['Bearer S3CRET-notify'] } }]\n"
        "registry['storage'] = { 'swift' => { 'username' => 'u', 'password' => 'S3CRET-swift' } }\n"
        "gitlab_rails['ldap_servers'] = <<~EOS\n  password: S3CRET-heredoc\nEOS\n"
    ),
    "etc/gitlab/sd_secret": "S3CRET-key-file-content\n",
    "config/gitlab.yml": (
        'production: &base\n  gitlab: {host: x}\n  incoming_email:\n    enabled: true\n    password: "S3CRET-yml"\n'
    ),
    "runner/config.toml": (
        '[[runners]]\n  token = "glrt-S3CRETS3CRETS3CRET"\n  shell = "cmd"\n'
        '  [runners.ssh]\n    password = "S3CRET-ssh"\n  broken = = "S3CRET-toml-error"\n'
    ),
    "helm/gitlab-runner/values.yaml": (
        'runnerRegistrationToken: "S3CRET-helm"\nenvVars:\n  - {name: REGISTRATION_TOKEN, value: "S3CRET-envvar"}\n'
    ),
    "k8s/secret.yaml": (
        "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData:\n"
        '  runner-registration-token: "S3CRET-operator"\n'
    ),
    "docker/docker-compose.yml": (
        "services:\n  runner:\n    image: gitlab/gitlab-runner:v17.11.0\n"
        '    command: ["register", "--registration-token", "S3CRET-compose-cmd"]\n'
        "    environment:\n      - REGISTRATION_TOKEN=S3CRET-compose-env\n"
        '      - "GITLAB_SHARED_RUNNERS_REGISTRATION_TOKEN=S3CRET-compose-shared"\n'
    ),
    "docker/runner.env": "REGISTRATION_TOKEN=S3CRET-envfile\nS3CRET-not-an-assignment\n",
    "docker/Dockerfile": (
        "FROM gitlab/gitlab-runner:v17.11.0\nENV REGISTRATION_TOKEN S3CRET-legacy-env\n"
        "RUN gitlab-runner register --registration-token S3CRET-run -r 'S3CRET-run-r'\n"
        'CMD ["register", "--registration-token", "S3CRET-exec"]\n'
    ),
}


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("secrets")
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


@pytest.mark.parametrize("fmt", FORMATS)
def test_no_secret_in_any_output(tree: Path, fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    main(["scan", str(tree), "--format", fmt, "--fail-on", "never"])
    out = capsys.readouterr().out
    assert "S3CRET" not in out


def test_the_findings_and_errors_are_there_redacted(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The check above is only worth something if the secrets' lines are in the output."""
    main(["scan", str(tree), "--format", "text", "--fail-on", "never"])
    out = capsys.readouterr().out
    for line in (
        "gitlab_rails['initial_shared_runners_registration_token'] = \"****\"",
        'runnerRegistrationToken: "****"',
        'runner-registration-token: "****"',
        '["register", "--registration-token", "****"]',
        "- REGISTRATION_TOKEN=****",
        "ENV REGISTRATION_TOKEN ****",
        "register --registration-token **** -r '****'",
        "'Authorization' => ['****']",
        "'password' => '****'",
        "gitlab_rails['db_password'] = '****'",
    ):
        assert line in out, line
    assert "`/etc/gitlab/sd_secret` does not hold strict base64 text" in out
    assert "etc/gitlab/gitlab.rb:8: a heredoc is not read; this statement is skipped" in out
    assert "runner/config.toml:6: TOML not read: expected a value" in out
    assert "docker/runner.env:2: not a `NAME=value` line" in out


@pytest.mark.parametrize("fmt", FORMATS)
def test_no_secret_from_the_samples(fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    main(["scan", str(ROOT / "samples"), "--format", fmt, "--fail-on", "never"])
    out = capsys.readouterr().out
    assert "S3CRET" not in out
