"""Paths in every format are relative to the working directory when what is scanned lies inside it
(as ruff, yamllint, editors and GitLab's Code Quality read them), and `sunset fix --diff` applies with
`git apply` from there. A folder outside the working directory is reported relative to itself."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, sunset

ENV = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "SUNSET_CACHE_DIR": "off", "HOME": "/nonexistent"}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "samples", tmp_path / "project" / "samples")
    return tmp_path / "project"


def test_every_format_names_paths_from_the_working_directory(project: Path) -> None:
    samples = project / "samples"
    found = json.loads(sunset("scan", "scripts/", "--format", "json", cwd=samples).stdout)["findings"]
    assert [(f["rule_id"], f["path"], f["line"], f["column"]) for f in found] == [
        ("rest-runner-ip-address", "scripts/runner-fleet.sh", 13, 75),
        ("rest-reset-registration-token", "scripts/runner-fleet.sh", 18, 49),
    ]
    text = sunset("scan", "scripts/", "--color", "never", cwd=samples).stdout
    assert text.startswith("scripts/runner-fleet.sh:13:75: ")
    concise_ci = sunset("scan", "samples/ci/runners.yml", "--format", "codequality", cwd=project).stdout
    assert {q["location"]["path"] for q in json.loads(concise_ci)} == {"samples/ci/runners.yml"}
    sarif = json.loads(sunset("scan", "samples/scripts", "--format", "sarif", cwd=project).stdout)
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in sarif["runs"][0]["results"]}
    assert uris == {"samples/scripts/runner-fleet.sh"}


def test_a_folder_outside_the_working_directory_is_reported_from_itself(project: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    found = json.loads(sunset("scan", str(project / "samples" / "scripts"), "--format", "json", cwd=elsewhere).stdout)
    assert {f["path"] for f in found["findings"]} == {"runner-fleet.sh"}


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_fix_diff_applies_with_git_apply_from_the_working_directory(project: Path, tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    written = tmp_path / "written"
    shutil.copytree(project, written)
    diff = sunset("fix", "--diff", "samples/", cwd=project)
    assert diff.returncode == 1 and diff.stdout.startswith("--- a/samples/")
    check = subprocess.run(["git", "apply", "--check", "-"], input=diff.stdout, text=True, cwd=project,
                           capture_output=True)
    assert (check.returncode, check.stderr) == (0, "")
    subprocess.run(["git", "apply", "-"], input=diff.stdout, text=True, cwd=project, check=True)
    assert sunset("fix", "samples/", cwd=written).returncode == 0
    changed = [p.relative_to(written) for p in written.rglob("*") if p.is_file() and ".git" not in p.parts
               and p.read_bytes() != (ROOT / p.relative_to(written)).read_bytes()]
    assert changed  # the run wrote fixes
    for rel in changed:
        assert (project / rel).read_bytes() == (written / rel).read_bytes(), rel
