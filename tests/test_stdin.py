"""`sunset scan -`: one file read from standard input, as ruff and yamllint read one. Its kind and the
path shown come from `--stdin-filename` (default: a pipeline file shown as `-`); a pipeline's local
includes are read from the working directory's repository. Tested through the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import sunset

PIPELINE = b"include:\n  - local: ci/build.yml\n  - template: Terraform.gitlab-ci.yml\n"
BUILD = "build:\n  script: echo $CI_BUILD_REF\n"
DATABASE = b"production:\n  adapter: postgresql\n  database: gitlabhq_production\n"
SUMMARY = ("Scanned 2 files for GitLab 20.0: 2 error(s), 0 warning(s), 0 info; 0 input error(s); 0 suppressed, "
           "0 baselined.\n")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "ci").mkdir()
    (tmp_path / "ci" / "build.yml").write_text(BUILD, encoding="utf-8")
    return tmp_path


def test_stdin_is_a_pipeline_shown_as_dash_with_local_includes_from_the_working_directory(repo: Path) -> None:
    done = sunset("scan", "-", "--format", "concise", cwd=repo, stdin=PIPELINE, process=True)  # a real pipe
    assert done.returncode == 1 and done.stderr == ""
    assert done.stdout == (
        "-:3:15: error[terraform-templates] Template `Terraform.gitlab-ci.yml` is removed in GitLab 18.0; use the "
        "OpenTofu CI/CD component or maintain your own copy.\n"
        "ci/build.yml:2:16: error[ci-build-variables] `CI_BUILD_REF` is no longer set since GitLab 16.0 (it expands "
        "to an empty string); use its `CI_COMMIT_*` / `CI_JOB_*` replacement.\n" + SUMMARY)


def test_stdin_filename_names_the_file_in_every_format(repo: Path) -> None:
    run = ("scan", "-", "--stdin-filename", "ci/main.yml")
    text = sunset(*run, "--color", "never", cwd=repo, stdin=PIPELINE).stdout
    assert text.startswith(
        "ci/build.yml:2:16: error[ci-build-variables] `CI_BUILD_REF` is no longer set since GitLab 16.0")
    assert "\nci/main.yml:3:15: error[terraform-templates] Template `Terraform.gitlab-ci.yml` is removed" in text
    assert text.endswith(SUMMARY)
    found = json.loads(sunset(*run, "--format", "json", cwd=repo, stdin=PIPELINE).stdout)
    assert [(f["rule_id"], f["path"], f["line"], f["column"]) for f in found["findings"]] == [
        ("ci-build-variables", "ci/build.yml", 2, 16), ("terraform-templates", "ci/main.yml", 3, 15)]
    assert [(i["from"], i["line"], i["kind"], i["target"], i["resolved"]) for i in found["includes"]] == [
        ("ci/main.yml", 2, "local", "ci/build.yml", True),
        ("ci/main.yml", 3, "template", "Terraform.gitlab-ci.yml", False)]
    sarif = json.loads(sunset(*run, "--format", "sarif", cwd=repo, stdin=PIPELINE).stdout)
    assert [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in sarif["runs"][0]["results"]] \
        == ["ci/build.yml", "ci/main.yml"]
    quality = json.loads(sunset(*run, "--format", "codequality", cwd=repo, stdin=PIPELINE).stdout)
    assert [(q["check_name"], q["location"]["path"], q["location"]["lines"]["begin"]) for q in quality] == [
        ("ci-build-variables", "ci/build.yml", 2), ("terraform-templates", "ci/main.yml", 3)]
    markdown = sunset(*run, "--format", "markdown", cwd=repo, stdin=PIPELINE).stdout
    assert "| error | `ci/build.yml:2` |" in markdown and "| error | `ci/main.yml:3` |" in markdown
    html = sunset(*run, "--format", "html", cwd=repo, stdin=PIPELINE).stdout
    assert html.startswith("<!DOCTYPE html>") and "ci/main.yml" in html
    stats = sunset(*run, "--statistics", cwd=repo, stdin=PIPELINE).stdout
    assert [line.split()[:2] for line in stats.splitlines()[:2]] == [
        ["1", "ci-build-variables"], ["1", "terraform-templates"]]


def test_the_name_decides_the_kind_and_replaces_the_file_on_disk(repo: Path) -> None:
    (repo / "config").mkdir()
    (repo / "config" / "database.yml").write_text("production:\n  main: {}\n  ci: {}\n", encoding="utf-8")
    done = sunset("scan", "-", "config/", "--stdin-filename", "config/database.yml", "--format", "concise",
                  cwd=repo, stdin=DATABASE)
    assert done.stdout.splitlines()[0] == (
        "config/database.yml:3:3: error[database-legacy-config] Database environment setting `database: "
        "gitlabhq_production` sits directly under the environment: the legacy `database.yml` form, removed in "
        "GitLab 15.0; nest the connection under `main:`.")
    assert done.stdout.splitlines()[1].startswith("Scanned 1 file for GitLab 20.0: 1 error(s)")


@pytest.mark.parametrize(("data", "name", "error"), [
    (b"\xff\xfe", None, "-:1: input error: not valid UTF-8 (byte 0xff at offset 0)"),
    (b"", None, "-: input error: empty file"),
    (b"a: [", None, "-:1: input error: invalid YAML: while parsing a flow node did not find expected node content "
                    "(line 1 not read)"),
    (b"x = 1\n", "notes.txt", "notes.txt: input error: not recognised: no GitLab file kind fits the name; name "
                              "another with --stdin-filename, or its kind under `kinds:` in .sunset.yml"),
])
def test_bad_input_on_stdin_is_an_input_error(repo: Path, data: bytes, name: str | None, error: str) -> None:
    named = ("--stdin-filename", name) if name else ()
    done = sunset("scan", "-", *named, "--format", "concise", cwd=repo, stdin=data)
    assert done.returncode == 1
    assert done.stdout.splitlines()[0].startswith(error)


def test_stdin_over_the_size_limit_is_not_read_whole(repo: Path) -> None:
    done = sunset("scan", "-", "--max-file-size", "100", "--format", "concise", cwd=repo, stdin=b"a: 1\n" * 100)
    assert done.stdout.splitlines()[0] == "-: input error: standard input is over the 100-byte limit; not scanned"


@pytest.mark.parametrize(("args", "message"), [
    (("-", "-"), "sunset: `-` (standard input) can be given once\n"),
    (("--stdin-filename", "x.yml"), "sunset: --stdin-filename names standard input: give `-` among the paths\n"),
])
def test_stdin_usage_errors_exit_2(repo: Path, args: tuple[str, ...], message: str) -> None:
    done = sunset("scan", *args, cwd=repo, stdin=b"")
    assert (done.returncode, done.stdout, done.stderr) == (2, "", message)
