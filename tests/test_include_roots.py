"""Where a pipeline's local includes start does not depend on which folder is scanned: the same file
gives the same findings, includes and errors for `sunset scan .`, `sunset scan sub/` and
`sunset scan sub/.gitlab-ci.yml` (scanner.core.files.named_repo_root says why each root is what it is).
And sunset's own checkout, as a clone has it, scans without a single input error."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from scanner.cli import main

from conftest import ROOT
from test_engine import DATA, write


def report(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    capsys.readouterr()
    main(["scan", *args, "--format", "json", "--fail-on", "never"])
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def under(data: dict[str, Any], prefix: str) -> tuple[set[tuple[Any, ...]], ...]:
    return ({(f["rule_id"], f["path"], f["line"], f["column"]) for f in data["findings"]
             if f["path"].startswith(prefix)},
            {(i["from"], i["line"], i["target"], i["resolved"]) for i in data["includes"]
             if i["from"].startswith(prefix)},
            {(e["path"], e["line"], e["message"]) for e in data["errors"] if e["path"].startswith(prefix)})


def test_the_same_file_gives_the_same_includes_whatever_is_scanned(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = write(tmp_path / "repo", {
        ".git/HEAD": "ref: refs/heads/main\n",
        "shared/jobs.yml": "variables:\n  OLD_VAR: shared\n",
        # a project kept in a folder: GitLab reads a .gitlab-ci.yml only at a repository's root
        "sample/.gitlab-ci.yml": "include:\n  - local: ci/*.yml\n",
        "sample/ci/build.yml": "variables:\n  OLD_VAR: sample\n",
        # any other pipeline file starts at the repository root, above the scanned folder if need be
        "sample/deploy.gitlab-ci.yml": "include: shared/jobs.yml\n",
    })
    monkeypatch.chdir(repo)
    policies = ["--policies", str(DATA)]
    expected = (
        {("t-variable", "sample/ci/build.yml", 2, 3), ("t-variable", "shared/jobs.yml", 2, 3)},
        {("sample/.gitlab-ci.yml", 2, "ci/*.yml", True), ("sample/deploy.gitlab-ci.yml", 1, "shared/jobs.yml", True)},
        set(),
    )
    whole, folder = report([".", *policies], capsys), report(["sample", *policies], capsys)
    assert under(whole, "s") == under(folder, "s") == expected
    named = report(["sample/.gitlab-ci.yml", "sample/deploy.gitlab-ci.yml", *policies], capsys)
    assert under(named, "s") == expected
    monkeypatch.chdir(repo / "sample")  # paths from the working directory (absolute above it); same roots
    inside = report([".", *policies], capsys)
    assert under(inside, "") == (
        {("t-variable", "ci/build.yml", 2, 3), ("t-variable", (repo / "shared/jobs.yml").as_posix(), 2, 3)},
        {(".gitlab-ci.yml", 2, "ci/*.yml", True), ("deploy.gitlab-ci.yml", 1, "shared/jobs.yml", True)},
        set(),
    )


def test_a_custom_configuration_file_named_like_the_default_starts_at_the_repository_root(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """GitLab's "CI/CD configuration file" setting may name `ci/.gitlab-ci.yml`: its includes are still
    read from the repository root, as GitLab reads them."""
    repo = write(tmp_path / "repo", {
        ".git/HEAD": "ref: refs/heads/main\n",
        "ci/.gitlab-ci.yml": "include: jobs/build.yml\n",
        "jobs/build.yml": "variables:\n  OLD_VAR: a\n",
    })
    monkeypatch.chdir(repo)
    data = report(["--ci-config", "ci/.gitlab-ci.yml", "--policies", str(DATA), "jobs"], capsys)
    assert under(data, "") == ({("t-variable", "jobs/build.yml", 2, 3)},
                               {("ci/.gitlab-ci.yml", 1, "jobs/build.yml", True)}, set())


def _clone(tmp_path: Path) -> Path:
    """The checkout as a clone has it: every file git tracks or would add, and a `.git` folder."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, check=True).stdout.decode().split("\0")
    clone = tmp_path / "sunset"
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, clone / name)
    (clone / ".git").mkdir()
    return clone


@pytest.mark.slow
def test_sunsets_own_checkout_scans_without_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Suppression examples in docstrings and strings are not suppressions; every fixture's local
    includes resolve from its own folder; and `samples/` gives the same results scanned alone."""
    clone = _clone(tmp_path)
    monkeypatch.chdir(clone)
    # tests/recall/ reproduces broken real files on purpose (tests/test_recall_forms.py checks them)
    whole = report([".", "--extend-exclude", "tests/recall/"], capsys)
    assert whole["errors"] == []
    assert under(whole, "samples/") == under(report(["samples"], capsys), "samples/")


def test_a_triggered_child_pipeline_keeps_the_repository_root(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = write(tmp_path / "repo", {
        ".git/HEAD": "ref: refs/heads/main\n",
        ".gitlab-ci.yml": "api:\n  trigger:\n    include: services/api/.gitlab-ci.yml\n",
        "services/api/.gitlab-ci.yml": "include: services/api/ci/build.yml\n",
        "services/api/ci/build.yml": "variables:\n  OLD_VAR: a\n",
    })
    monkeypatch.chdir(repo)
    assert under(report([".", "--policies", str(DATA)], capsys), "") == (
        {("t-variable", "services/api/ci/build.yml", 2, 3)},
        {(".gitlab-ci.yml", 3, "services/api/.gitlab-ci.yml", True),
         ("services/api/.gitlab-ci.yml", 1, "services/api/ci/build.yml", True)},
        set(),
    )
