"""Files recognised by their content where the name does not decide: a CI template library's YAML files
(pipeline configuration other projects include, not a pipeline root by name) and templates of shell
scripts (Terraform's `*.tpl` user data). Ordinary YAML — Kubernetes, compose, Ansible, Helm values,
other CI systems — and templates of other languages must stay what they were."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scanner.cli import main
from scanner.engine.recognise import Recognition, looks_like_ci

CI = "gitlab-ci"

LIBRARY = [
    # a security template kept in a shared project, included with `include: project:`
    ("gitlab-specific/Dependency.yml",
     "variables:\n  DS_MAJOR_VERSION: 2\n\ndependency_scanning:\n  stage: test\n  script:\n    - exit 1\n"
     "\n.ds-analyzer:\n  extends: dependency_scanning\n  script: [/analyzer run]\n"),
    ("templates/build.yaml", "---\n.build:\n  image: docker:24\n  script:\n    - docker build .\n"),
    ("ci/all.yml", "include:\n  - local: ci/build.yml\n  - template: Jobs/SAST.gitlab-ci.yml\n"),
    ("ci/stages.yml", "stages: [build, test]\nvariables:\n  A: '1'\n"),
    ("pipelines/deploy.yml", "deploy:\n  extends: .deploy\n  environment: production\n"),
    ("lib/child.yml", "workflow:\n  rules:\n    - if: $CI_COMMIT_TAG\n"),
    ("shared/trigger.yml", "downstream:\n  trigger:\n    project: group/app\n"),
    # a template with inputs: a `spec:` header, then the configuration
    ("gitlab/scan.yml",
     "spec:\n  inputs:\n    stage:\n      default: test\n---\nscan:\n  stage: $[[ inputs.stage ]]\n  script: [scan]\n"),
    ("ci/refs.yml", ".setup:\n  script: [make]\njob:\n  script:\n    - !reference [.setup, script]\n"),
]

ORDINARY = [
    ("k8s/deploy.yml", "apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers: []\n"),
    ("stack.yml", "version: '3'\nservices:\n  web:\n    image: nginx\n    command: nginx -g 'daemon off;'\n"),
    ("old-compose.yml", "web:\n  image: nginx\n  command: run\n  ports: ['80:80']\n"),
    ("site.yml", "- hosts: all\n  tasks:\n    - name: x\n      shell: echo hi\n"),
    ("roles/x/defaults/main.yml", "runner_version: 16.0\nrunner_tags: []\n"),
    ("chart/my-settings.yml", "image:\n  repository: gitlab/gitlab-runner\n  tag: v16\nreplicas: 2\n"),
    ("deploy/runner.yml", "runners:\n  config: |\n    [[runners]]\n  privileged: true\n"),
    (".github/workflows/ci.yml",
     "name: CI\non: [push]\njobs:\n  build:\n    runs-on: ubuntu-latest\n    steps:\n      - run: make\n"),
    ("azure-pipelines.yml", "trigger:\n  - main\nstages:\n  - stage: Build\n    jobs: []\n"),
    (".travis.yml", "language: python\nscript:\n  - pytest\n"),
    ("bitbucket-pipelines.yml", "image: python:3\npipelines:\n  default:\n    - step:\n        script: [make]\n"),
    (".drone.yml", "kind: pipeline\nname: default\nsteps:\n  - name: test\n    commands: [make]\n"),
    (".woodpecker.yml", "steps:\n  build:\n    image: golang\n    commands: [go build]\n"),
    (".circleci/config.yml", "version: 2.1\njobs:\n  build:\n    docker: []\n    steps: [checkout]\n"),
    ("Taskfile.yml", "version: '3'\ntasks:\n  build:\n    cmds: [go build]\n"),
    ("ci/vars.yml", "variables:\n  A: '1'\n"),  # nothing only CI has
    ("ci/job-typo.yml", "build:\n  script: [make]\n  scirpt_extra: 1\n"),  # GitLab refuses an unknown job key
    ("ci/list.yml", "- script: make\n"),
    ("ci/empty.yml", ""),
    ("ci/broken.yml", "build:\n  script: [make\n"),
    ("mkdocs.yml", "site_name: x\nnav:\n  - index.md\n"),
    ("ci/include-other.yml", "include:\n  - '*.conf'\n"),
]

TEMPLATES = [
    ("template/user-data.sh.tpl", "${pre_install}\nyum install -y x\n", "shell-script"),
    ("template/gitlab-runner.tpl", "mkdir -p /etc/gitlab-runner\ncat > x <<EOF\n${config}\nEOF\n", "shell-script"),
    ("template/start.tpl", "#!/usr/bin/env bash\nset -e\n", "shell-script"),
    ("template/boot.tpl", "# boot\n%{ if debug ~}\nset -x\n%{ endif ~}\n", "shell-script"),
    ("template/install.sh.j2", "{{ header }}\napt-get install -y x\n", "shell-script"),
    ("template/runner-config.tpl", "concurrent = ${n}\n[[runners]]\n  name = \"${name}\"\n", "runner-config"),
    ("template/page.tpl", "<html>\n<body>{$title}</body>\n</html>\n", None),
    ("template/policy.tpl", "{\n  \"Version\": \"2012-10-17\"\n}\n", None),
    ("template/cloud-init.tpl", "#cloud-config\npackage_update: true\nruncmd:\n  - echo hi\n", None),
    ("template/mail.tpl", "Hello ${name},\nyour runner is ready.\n", None),
    ("template/header.tmpl", "{{ define \"x\" }}{{ end }}\n", None),
]


CHART_VALUES = [
    ("helmfile/gitlab.yaml", "global:\n  hosts:\n    domain: x\ncertmanager:\n  install: false\n", "helm-values"),
    ("deploy/gitlab.yaml", "global:\n  appConfig:\n    lfs: {}\ngitlab:\n  webservice: {}\n", "helm-values"),
    ("deploy/runner.yml", "gitlabUrl: https://gitlab.example.org\nrbac:\n  create: true\n", "helm-values"),
    ("deploy/stack.yml", "gitlab-runner:\n  gitlabUrl: https://x\n  runners: {}\n", "helm-values"),
    ("config/gitlab.yml", "production: &base\n  gitlab:\n    host: x\n", "gitlab-yml"),
    ("config/gitlab.yml", "global:\n  hosts: {}\nproduction:\n  gitlab:\n    host: x\n", "gitlab-yml"),
    ("chart/Chart.yaml", "apiVersion: v2\nname: gitlab\ndependencies:\n  - name: certmanager-issuer\n", None),
    ("config/app.yaml", "global:\n  hosts:\n    - a\nservers: []\n", None),
    ("k8s/runner.yaml", "apiVersion: v1\nkind: ConfigMap\ndata:\n  gitlabUrl: x\n", "k8s-manifest"),
]


@pytest.mark.parametrize(("rel", "text", "kind"), CHART_VALUES, ids=[r for r, _, _ in CHART_VALUES])
def test_chart_values_by_content(tmp_path: Path, rel: str, text: str, kind: str | None) -> None:
    assert _kind(tmp_path, rel, text) == kind


def _kind(tmp_path: Path, rel: str, text: str) -> str | None:
    path = tmp_path / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    kind = Recognition().walked(path, rel)
    return kind.name if kind is not None else None


@pytest.mark.parametrize(("rel", "text"), LIBRARY, ids=[r for r, _ in LIBRARY])
def test_ci_library_file_is_pipeline_configuration(tmp_path: Path, rel: str, text: str) -> None:
    assert _kind(tmp_path, rel, text) == CI


@pytest.mark.parametrize(("rel", "text"), ORDINARY, ids=[r for r, _ in ORDINARY])
def test_ordinary_yaml_is_not_pipeline_configuration(tmp_path: Path, rel: str, text: str) -> None:
    assert _kind(tmp_path, rel, text) != CI


@pytest.mark.parametrize(("rel", "text", "kind"), TEMPLATES, ids=[r for r, _, _ in TEMPLATES])
def test_template_kind_by_content(tmp_path: Path, rel: str, text: str, kind: str | None) -> None:
    assert _kind(tmp_path, rel, text) == kind


def _scan(folder: Path) -> dict[str, object]:
    (folder / ".git").mkdir(exist_ok=True)
    out = folder.parent / "report.json"
    assert main(["scan", str(folder), "--format", "json", "--output", str(out), "--exit-zero", "--quiet"]) == 0
    report: dict[str, object] = json.loads(out.read_text(encoding="utf-8"))
    return report


def test_library_read_once_when_a_root_includes_it(tmp_path: Path) -> None:
    """A library file that the repository's own pipeline includes is read once, with its findings once."""
    repo = tmp_path / "repo"
    (repo / "ci").mkdir(parents=True)
    (repo / ".gitlab-ci.yml").write_text("include:\n  - local: ci/old.yml\n", encoding="utf-8")
    (repo / "ci" / "old.yml").write_text("build:\n  script:\n    - echo $CI_BUILD_REF_NAME\n", encoding="utf-8")
    report = _scan(repo)
    findings = {(f["rule_id"], f["path"], f["line"], f["column"]) for f in report["findings"]}  # type: ignore[attr-defined]
    assert findings == {("ci-build-variables", "ci/old.yml", 3, 12)}
    assert report["summary"]["files_scanned"] == 2  # type: ignore[index]


def test_other_ci_systems_yield_nothing(tmp_path: Path) -> None:
    """A GitHub workflow and a Travis file naming GitLab's old variables are not GitLab's to report."""
    repo = tmp_path / "repo"
    (repo / ".github" / "workflows").mkdir(parents=True)
    (repo / ".github" / "workflows" / "ci.yml").write_text(
        "name: x\non: push\njobs:\n  b:\n    runs-on: ubuntu-latest\n"
        "    steps:\n      - run: echo $CI_BUILD_REF_NAME\n",
        encoding="utf-8")
    (repo / ".travis.yml").write_text("language: c\nscript:\n  - echo $CI_BUILD_REF_NAME\n", encoding="utf-8")
    report = _scan(repo)
    assert report["findings"] == []
    assert report["summary"]["files_scanned"] == 0  # type: ignore[index]


_SCALARS = st.none() | st.booleans() | st.integers() | st.text(max_size=8)
_DATA = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=4)
                     | st.dictionaries(st.text(max_size=8) | st.integers(), inner, max_size=4), max_leaves=20)


@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(roots=st.lists(_DATA, max_size=3))
def test_content_test_takes_any_data(roots: list[object]) -> None:
    assert looks_like_ci(roots) in (True, False)


@settings(suppress_health_check=list(HealthCheck), deadline=None, max_examples=60)
@given(name=st.sampled_from(["ci/x.yml", "lib/y.yaml", "t/boot.tpl", "t/a.sh.tpl", "t/b.tmpl"]),
       data=st.binary(max_size=300))
def test_recognition_takes_any_bytes(tmp_path_factory: pytest.TempPathFactory, name: str, data: bytes) -> None:
    folder = tmp_path_factory.mktemp("bytes")
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    kind = Recognition().walked(path, name)
    assert kind is None or kind.name in (CI, "shell-script", "runner-config")
