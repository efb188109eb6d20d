"""Custom CI/CD configuration files and files named on the command line, through the CLI: the
pipeline GitLab runs is scanned whatever its file is called, local includes start at the repository
root, a named file is read as the kind its name says, and a file no kind fits is reported."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scanner.commands.scan import NOTHING_FOUND
from scanner.rules.documents import KINDS

from conftest import sunset

MAIN = "include:\n  - local: ci/runners.yml\n"
RUNNERS = (
    "register:\n"
    "  script:\n"
    '    - gitlab-runner register --registration-token "$TOKEN" --url https://gitlab.example.com\n'
)
TOKEN = "runner-registration-token"


def as_json(cwd: Path, *args: str) -> dict[str, Any]:
    done = sunset(*args, "--format", "json", cwd=cwd)
    assert done.returncode in (0, 1), done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def where(report: dict[str, Any]) -> list[tuple[str, str, int, int]]:
    return [(f["rule_id"], f["path"], f["line"], f["column"]) for f in report["findings"]]


@pytest.fixture(params=["git", "no-git"])
def repo(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """A project whose pipeline is `ci/main.yml` (a GitLab setting), with or without `.git`."""
    root = tmp_path / "project"
    (root / "ci").mkdir(parents=True)
    (root / "ci" / "main.yml").write_text(MAIN)
    (root / "ci" / "runners.yml").write_text(RUNNERS)
    if request.param == "git":
        (root / ".git").mkdir()
    return root


def test_a_folder_without_gitlab_files_says_what_was_looked_for(tmp_path: Path) -> None:
    repo = tmp_path / "project"
    (repo / "ci").mkdir(parents=True)
    (repo / "ci" / "main.conf").write_text(MAIN)  # not a name any kind reads
    (repo / "ci" / "notes.yml").write_text("owners: [a, b]\n")
    done = sunset("scan", ".", cwd=repo)
    assert done.returncode == 0
    assert done.stdout.startswith("Scanned 0 files for GitLab")
    assert done.stderr == NOTHING_FOUND
    assert "--ci-config PATH" in NOTHING_FOUND and "ci_config_path:" in NOTHING_FOUND


def test_a_named_pipeline_resolves_local_includes_from_the_repository_root(repo: Path) -> None:
    report = as_json(repo, "scan", "ci/main.yml")
    assert report["errors"] == []
    assert where(report) == [(TOKEN, "ci/runners.yml", 3, 30)]  # paths from the working directory
    assert [(i["from"], i["line"], i["kind"], i["target"], i["resolved"]) for i in report["includes"]] == [
        ("ci/main.yml", 2, "local", "ci/runners.yml", True)
    ]


def test_ci_config_flag_adds_a_pipeline_root(repo: Path) -> None:
    report = as_json(repo, "scan", ".", "--ci-config", "ci/main.yml")
    assert report["errors"] == []
    assert where(report) == [(TOKEN, "ci/runners.yml", 3, 30)]
    assert report["summary"]["files_scanned"] == 2


def test_ci_config_path_in_sunset_yml(repo: Path) -> None:
    (repo / ".sunset.yml").write_text("target: '19.0'\nci_config_path: ci/main.yml\n")
    report = as_json(repo, "scan", ".")
    assert where(report) == [(TOKEN, "ci/runners.yml", 3, 30)]


def test_other_projects_and_urls_are_recorded_and_a_missing_file_is_an_error(repo: Path) -> None:
    (repo / ".sunset.yml").write_text(
        "ci_config_path:\n"
        "  - .gitlab/pipeline.yml\n"
        "  - ci/main.yml@platform/ci-templates\n"
        "  - https://example.com/ci/main.yml\n"
    )
    report = as_json(repo, "scan", ".")
    assert report["errors"] == [
        {"path": ".sunset.yml", "line": 2, "message": "CI/CD configuration file `.gitlab/pipeline.yml` does not exist"}
    ]
    named = [i for i in report["includes"] if i["from"] == ".sunset.yml"]
    assert [(i["from"], i["line"], i["kind"], i["target"], i["resolved"], i["note"]) for i in named] == [
        (".sunset.yml", 3, "project", "platform/ci-templates:ci/main.yml", False,
         "custom CI/CD configuration file in another project"),
        (".sunset.yml", 4, "remote", "https://example.com/ci/main.yml", False,
         "custom CI/CD configuration file; not fetched"),
    ]
    # the pipeline files are still read by their content (a CI template library's files are not roots by name)
    assert where(report) == [(TOKEN, "ci/runners.yml", 3, 30)]


def test_a_named_database_yml_is_a_database_config(tmp_path: Path) -> None:
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "database.yml").write_text(
        "production:\n  main:\n    adapter: postgresql\n    database: gitlabhq_production\n"
    )
    report = as_json(tmp_path, "scan", "config/database.yml")
    assert where(report) == [("database-ci-section", "config/database.yml", 1, 1)]


def test_a_named_yaml_file_with_jobs_is_a_pipeline_root(tmp_path: Path) -> None:
    (tmp_path / "build.yml").write_text("include:\n  - template: Terraform.gitlab-ci.yml\nlint:\n  script: [make]\n")
    report = as_json(tmp_path, "scan", "build.yml")
    assert where(report) == [("terraform-templates", "build.yml", 2, 15)]


@pytest.mark.parametrize(("name", "text"), [("notes.txt", "hello\n"), ("plain.yml", "a: 1\n")])
def test_a_named_file_no_kind_fits_is_reported_not_counted(tmp_path: Path, name: str, text: str) -> None:
    (tmp_path / name).write_text(text)
    done = sunset("scan", name, "--format", "json", cwd=tmp_path)
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert report["summary"]["files_scanned"] == 0
    assert report["errors"] == [{
        "path": name, "line": None,
        "message": "not recognised: no GitLab file kind fits it; if it is one, name its kind under `kinds:` in "
                   f".sunset.yml ({', '.join(KINDS)})",
    }]


def test_kinds_in_sunset_yml_decide_for_walked_and_named_files(tmp_path: Path) -> None:
    (tmp_path / "pipelines").mkdir()
    (tmp_path / "pipelines" / "deploy.yml").write_text("include:\n  - template: Terraform/Base.gitlab-ci.yml\n")
    (tmp_path / ".sunset.yml").write_text("kinds:\n  'pipelines/*.yml': gitlab-ci\n")
    assert where(as_json(tmp_path, "scan", ".")) == [("terraform-templates", "pipelines/deploy.yml", 2, 15)]


def test_an_unknown_kind_in_sunset_yml_is_refused(tmp_path: Path) -> None:
    (tmp_path / ".sunset.yml").write_text("kinds:\n  '*.yml': pipeline\n")
    done = sunset("scan", ".", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith(f"sunset: {tmp_path / '.sunset.yml'}:1: kinds: Value error, unknown document kind "
                                  "'pipeline'; known: gitlab-ci, shell-script,")
