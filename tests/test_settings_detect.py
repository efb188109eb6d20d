"""How settings files are recognised: by name (under a template suffix), and by a look at the text only
where a name is shared with other software."""

from __future__ import annotations

from pathlib import Path

import pytest

from scanner.rules.documents import claiming_kind

CASES = [
    ("etc/gitlab/gitlab.rb", "external_url 'https://gitlab.example.com'\n", "omnibus-config"),
    ("files/gitlab.rb.template", "# gitlab_rails['x'] = 1\nregistry['enable'] = true\n", "omnibus-config"),
    ("ansible/templates/gitlab-settings.rb", "gitlab_rails['time_zone'] = 'UTC'\n", "omnibus-config"),
    # GitLab's own lib/gitlab.rb is code, not settings: a Ruby script
    ("lib/gitlab.rb", "module Gitlab\n  def self.config\n    Settings['x']\n  end\nend\n", "ruby-source"),
    ("config/gitlab.yml", "production: &base\n  gitlab:\n    host: x\n", "gitlab-yml"),
    ("config/gitlab.yml.example", "production: &base\n  gitlab:\n    host: x\n", "gitlab-yml"),
    ("tools/gitlab.yml", "token: x\nprojects: [a]\n", None),
    ("config/database.yml.postgresql", "production:\n  main:\n    database: gitlabhq_production\n", "database-yml"),
    ("rails-app/config/database.yml", "production:\n  adapter: postgresql\n  database: shop\n", None),
    ("runner/config.toml", "concurrent = 1\n[[runners]]\n  name = 'x'\n", "runner-config"),
    ("site/config.toml", "baseURL = 'https://example.org'\n[params]\n", None),
    ("registry/config.yml", "version: 0.1\nstorage:\n  s3: {}\nhttp:\n  addr: :5000\n", "registry-config"),
    ("app/config.yml", "storage: local\nname: x\n", None),
    ("deploy/gitlab-runner/values.yaml", "gitlabUrl: https://x\n", "helm-values"),
    ("deploy/runner-values.prod.yml", "gitlabUrl: https://x\n", "helm-values"),
    ("docker-compose.override.yml", "services: {}\n", "compose"),
    ("compose.yaml", "services: {}\n", "compose"),
    ("docker/Dockerfile.runner", "FROM alpine\n", "dockerfile"),
    ("Containerfile", "FROM alpine\n", "dockerfile"),
    ("docker/runner.env", "A=1\n", "env-file"),
    (".env.production", "A=1\n", "env-file"),
    (".envrc", "export A=1\n", None),
    ("k8s/secret.yaml", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: x\n", "k8s-manifest"),
    (
        "chart/templates/deployment.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n",
        None,
    ),
    ("notes.yaml", "title: not a manifest\n", None),
    (".gitlab/security-policies/policy.yml", "approval_policy:\n- name: x\n", "security-policy"),
    ("policies/security-policies/extra.yaml", "scan_execution_policy:\n- name: x\n", "security-policy"),
    ("docs/security-policies/readme.yml", "title: notes about policies\n", None),
    (".gitlab/agents/prod-agent/config.yaml", "ci_access:\n  projects: []\n", "agent-config"),
    (".gitlab/auto-deploy-values.yaml", "replicaCount: 2\n", "auto-deploy-values"),
    ("deploy/auto-deploy-values.yaml", "replicaCount: 2\n", "helm-values"),
    ("deploy/agents/prod-agent/config.yaml", "ci_access:\n  projects: []\n", None),
    ("project/build.properties", "sbt.version=1.0.4\n", "java-properties"),
    ("src/build.properties", "version=1\n", None),
    (".mvn/wrapper/maven-wrapper.properties", "distributionUrl=https://x/apache-maven-3.6.3-bin.zip\n",
     "java-properties"),
    ("monitoring/gitlab.rules.yml", "groups:\n  - name: g\n    rules:\n      - alert: A\n        expr: up == 0\n",
     "prometheus-rules"),
    ("ansible/groups.yml", "groups:\n  - name: admins\n", None),
    ("src/Api/Api.csproj", "<Project Sdk=\"Microsoft.NET.Sdk\" />\n", "text-file"),
    ("Godeps/Godeps.json", "{\"ImportPath\": \"x\"}\n", "text-file"),
    ("public/index.html", "<!doctype html>\n", "text-file"),
    (".gitlab/static-site-editor.yml", "image_upload_path: x\n", "text-file"),
    # recognition reads the whole text: a long comment header hides nothing; a byte-order mark is read past
    ("etc/gitlab/gitlab.rb", "# " + "x" * 80 + "\n" * 200 + "## comment\n" * 2000 + "gitlab_rails['a'] = 1\n",
     "omnibus-config"),
    ("k8s/deploy.yaml", "\ufeffapiVersion: apps/v1\nkind: Deployment\n", "k8s-manifest"),
    ("k8s/long.yaml", "#" * 100 + "\n" * 100 + "# note\n" * 1000 + "apiVersion: v1\nkind: Pod\n", "k8s-manifest"),
    # a template is read under its template suffix
    ("roles/gitlab/templates/docker-compose.yml.j2", "services: {}\n", "compose"),
    ("helmfile/values.yaml.gotmpl", "gitlabUrl: {{ .Values.url }}\n", "helm-values"),
    ("k8s/deploy.yaml.j2", "apiVersion: apps/v1\nkind: Deployment\n", "k8s-manifest"),
    ("roles/runner/templates/config.toml.j2", "concurrent = {{ n }}\n[[runners]]\n", "runner-config"),
    ("cookbooks/gitlab/templates/gitlab.rb.erb", "external_url '<%= @url %>'\n", "omnibus-config"),
    # a template with no other extension: a runner's config.toml when its text is TOML
    ("terraform/template/runner-config.tpl", "concurrent = ${n}\n\n[[runners]]\n  name = \"${name}\"\n",
     "runner-config"),
    ("terraform/template/runner.tmpl", "%{ if on ~}\n[[runners]]\n  name = \"x\"\n%{ endif ~}\n", "runner-config"),
    ("terraform/template/user-data.tpl", "#!/bin/bash\ncat > config.toml <<EOF\n[[runners]]\nEOF\n", "shell-script"),
    ("terraform/template/notes.tpl", "concurrent = 1\n", None),
]


@pytest.mark.parametrize(("rel", "text", "kind"), CASES, ids=[c[0] for c in CASES])
def test_claims(tmp_path: Path, rel: str, text: str, kind: str | None) -> None:
    path = tmp_path / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    found = claiming_kind(path)
    assert (found.name if found else None) == kind


def test_a_database_yml_beside_gitlab_yml_is_gitlabs(tmp_path: Path) -> None:
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "gitlab.yml").write_text("production:\n  gitlab: {}\n")
    path = tmp_path / "config" / "database.yml"
    path.write_text("production:\n  main:\n    adapter: postgresql\n")
    found = claiming_kind(path)
    assert found is not None and found.name == "database-yml"
