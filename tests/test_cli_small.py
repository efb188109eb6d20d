"""The smaller everyday paths of issue 15: `policies list` (header, JSON, `--policies` after the action),
`--target 17` / `17.10.2`, `--max-file-size` refused when not positive, help texts, the pre-commit hook's
`files` pattern, and the job-token reach of a package-registry URL."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from scanner.readers.yamldoc import load_yaml

from conftest import ROOT, sunset

DATA = ROOT / "tests" / "data" / "policies"


def test_policies_list_has_a_header_json_and_takes_policies_after_the_action() -> None:
    text = sunset("policies", "list", cwd=ROOT).stdout.splitlines()
    assert re.fullmatch(r"POLICY +REMOVED  FIX  TITLE", text[0])
    (agent,) = [line for line in text if line.startswith("agent-ca-cert-file ")]
    assert re.fullmatch(r"agent-ca-cert-file +17\.0  \[\*\]  Agent for Kubernetes .*", agent)
    rows = json.loads(sunset("policies", "list", "--format", "json", cwd=ROOT).stdout)
    assert {"id": "agent-ca-cert-file", "title": "Agent for Kubernetes `--ca-cert-file` / Helm `config.caCert`",
            "deprecated_in": "16.9", "removed_in": "17.0", "removal": "scheduled", "fix_tier": "safe",
            "origin": "deprecation-summary"} in rows
    after = json.loads(sunset("policies", "list", "--policies", str(DATA), "--format", "json", cwd=ROOT).stdout)
    before = json.loads(sunset("policies", "--policies", str(DATA), "list", "--format", "json", cwd=ROOT).stdout)
    assert after == before and {r["id"] for r in after} - {r["id"] for r in rows} == {
        p.stem for p in DATA.rglob("*.yaml")}


@pytest.mark.parametrize(("given", "shown"), [("17", "17.0"), ("17.10.2", "17.10"), ("18.0", "18.0")])
def test_target_forms(tmp_path: Path, given: str, shown: str) -> None:
    done = sunset("scan", ".", "--target", given, "--format", "json", cwd=tmp_path)
    assert json.loads(done.stdout)["target"] == shown
    (tmp_path / ".sunset.yml").write_text(f"target: '{given}'\n", encoding="utf-8")
    assert json.loads(sunset("scan", ".", "--format", "json", cwd=tmp_path).stdout)["target"] == shown


def test_bad_target_and_file_size_are_usage_errors(tmp_path: Path) -> None:
    done = sunset("scan", ".", "--target", "17.x", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (2, "sunset: --target: not a GitLab release (MAJOR.MINOR): '17.x'\n")
    size = sunset("scan", ".", "--max-file-size", "-5", cwd=tmp_path)
    assert size.returncode == 2
    assert size.stderr.endswith(
        "sunset scan: error: argument --max-file-size: must be a positive number of bytes: -5\n")


def test_scan_help_describes_every_option() -> None:
    text = sunset("scan", "--help", cwd=ROOT).stdout
    assert "Report what the given repositories, settings files and scripts use that GitLab deprecates" in " ".join(
        text.split())
    options = re.findall(r"^  (-[-\w, ]+?)(?:  |\n)", text, re.M)
    assert "--max-file-size BYTES" in " ".join(options)
    for option in ("--format", "--max-file-size", "--color", "--output", "--select", "--statistics"):
        block = text[text.index(option):]
        assert re.match(r"[^\n]*\n?\s+\S", block), option


def test_pre_commit_files_pattern_covers_every_kind_sunset_reads() -> None:
    (hook,) = load_yaml((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")).roots[0]
    files = re.compile(hook["files"])
    read = [".gitlab-ci.yml", "ci/build.yaml", "config/gitlab.rb", "lib/tasks/x.rake", "config.toml",
            "scripts/deploy.sh", "tools/x.bash", "tools/runners.py", "web/api.js", "web/api.mjs", "web/api.ts",
            "web/App.tsx", "web/App.jsx", "schema/q.graphql", "q.gql", "infra/main.tf", "Dockerfile",
            "docker/Dockerfile.prod", "Containerfile", "build.dockerfile", ".env", "deploy/.env.production",
            "prod.env"]
    assert [name for name in read if not files.search(name)] == []
    assert [name for name in ("README.md", "setup.cfg", "main.go", "environment.txt") if files.search(name)] == []


def test_pre_commit_entry_scans_the_repository_and_ignores_unrelated_files(tmp_path: Path) -> None:
    (hook,) = load_yaml((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")).roots[0]
    assert (hook["entry"], hook["pass_filenames"]) == ("sunset scan --fail-on error .", False)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n", encoding="utf-8")
    (tmp_path / ".gitlab-ci.yml").write_text("job:\n  script: [make]\n", encoding="utf-8")
    assert sunset(*hook["entry"].split()[1:], cwd=tmp_path).returncode == 0  # pyproject.toml is not an error
    (tmp_path / ".gitlab-ci.yml").write_text("include:\n  - template: Terraform.gitlab-ci.yml\n", encoding="utf-8")
    assert sunset(*hook["entry"].split()[1:], cwd=tmp_path).returncode == 1


def test_package_registry_url_reach_names_the_project(tmp_path: Path) -> None:
    (tmp_path / ".gitlab-ci.yml").write_text(
        "install:\n  script:\n    - pip install --index-url "
        "https://gitlab-ci-token:${CI_JOB_TOKEN}@gitlab.example.com/api/v4/projects/42/packages/pypi/simple mylib\n",
        encoding="utf-8")
    findings = json.loads(sunset("scan", ".", "--format", "json", cwd=tmp_path).stdout)["findings"]
    assert [(f["rule_id"], f["line"], f["column"], f["message"]) for f in findings] == [
        ("job-token-allowlist-enforcement", 3, 106,  # the column of `42`
         "This job reaches `42` with its CI_JOB_TOKEN; from GitLab 18.0 that project must allowlist this one.")]
