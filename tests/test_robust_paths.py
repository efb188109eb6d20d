# ruff: noqa: E501  (expected messages are quoted whole)
"""Issue 27, every path a clear error and inside the repository: files named by an option or by the
repository's own configuration are regular files, bounded in size, and (when the repository named
them) inside it; writing says `cannot write …: reason` and exits 2; wildcard includes are bounded
and never take a file of another kind for a pipeline file. One line on stderr, never a traceback.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from scanner.cli import main

from conftest import sunset

ROOT = Path(__file__).resolve().parent.parent
JWT_JOB = 'job:\n  script: [echo "$CI_JOB_JWT"]\n'
DATABASE = ("production:\n  ci:\n    adapter: postgresql\n    database: gitlabhq_production\n    database_tasks: false\n"
            "  main:\n    adapter: postgresql\n    database: gitlabhq_production\n")


@pytest.fixture()
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / ".gitlab-ci.yml").write_text(JWT_JOB, encoding="utf-8")
    monkeypatch.chdir(root)
    return root


# In a process with a deadline: a hang (a FIFO waited on) fails the test instead of the run.
HANG_GUARD: dict[str, Any] = {"process": True, "timeout": 60}


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") == 1, err
    return err


@pytest.mark.parametrize(("argv", "said"), [
    (["--baseline", "/dev/zero"], "sunset: /dev/zero: cannot read the baseline: not a regular file (a character device)\n"),
    (["--baseline", "."], "sunset: .: cannot read the baseline: is a directory, not a file\n"),
    (["--write-baseline", "/dev/full"], "sunset: cannot write the baseline to /dev/full: No space left on device\n"),
    (["--write-baseline", "."], "sunset: cannot write the baseline to .: a folder\n"),
    (["--config", "."], "sunset: .:1: cannot read: is a directory, not a file\n"),
    (["--config", "/dev/zero"], "sunset: /dev/zero:1: cannot read: not a regular file (a character device)\n"),
    (["--select", ""], "sunset: --select: no policy id given (an empty value would run no policy)\n"),
    (["--select", " , "], "sunset: --select: no policy id given (an empty value would run no policy)\n"),
    (["-o", "/dev/full"], "sunset: cannot write text report to /dev/full: No space left on device\n"),
    (["-o", "."], "sunset: cannot write text report to .: a folder\n"),
])
def test_bad_files_named_by_options(repo: Path, argv: list[str], said: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scan", ".", *argv]) == 2
    assert _one_line(capsys) == said


def test_writing_into_a_missing_folder(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scan", ".", "--write-baseline", "no/such/b.json"]) == 2
    assert _one_line(capsys) == f"sunset: cannot write the baseline to no/such/b.json: the folder {repo}/no/such does not exist\n"


def test_fifos_are_refused_not_waited_on(repo: Path) -> None:
    fifo = repo / "fifo"
    os.mkfifo(fifo)
    for argv, said in (
        (["--baseline", str(fifo)], f"sunset: {fifo}: cannot read the baseline: not a regular file (a FIFO)\n"),
        (["--write-baseline", str(fifo)], f"sunset: cannot write the baseline to {fifo}: a FIFO with no reader\n"),
        (["-o", f"json={fifo}"], f"sunset: cannot write json report to {fifo}: a FIFO with no reader\n"),
        (["--config", str(fifo)], f"sunset: {fifo}:1: cannot read: not a regular file (a FIFO)\n"),
    ):
        done = sunset("scan", ".", *argv, cwd=repo, **HANG_GUARD)
        assert (done.returncode, done.stderr) == (2, said)


@pytest.mark.parametrize(("text", "said"), [
    ("[tool.sunset]\nx = " + "[" * 5000 + "]" * 5000 + "\n", "cannot read: nested too deeply"),
    ("[tool.sunset]\ntarget = " + "9" * 5000 + "\n", "cannot read: Exceeds the limit (4300 digits) for integer string "
                                                     "conversion: value has 5000 digits"),
])
def test_hostile_pyproject(repo: Path, text: str, said: str, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "pyproject.toml").write_text(text, encoding="utf-8")
    assert main(["scan", "."]) == 2
    assert _one_line(capsys) == f"sunset: {repo}/pyproject.toml:1: {said}\n"


@pytest.mark.parametrize(("text", "said"), [
    ("[" * 100_000, "cannot read the report: nested too deeply"),
    ('{"version": 1, "target": "18.0", "findings": [7], "errors": [], "summary": {}}',
     "a finding or error does not follow the JSON contract"),
    ("[1, 2]", "not a sunset JSON report, version 1 (`sunset scan --format json`)"),
])
def test_hostile_report_to_comment(tmp_path: Path, text: str, said: str, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "r.json"
    report.write_text(text, encoding="utf-8")
    assert main(["comment", "--report", str(report), "--dry-run"]) == 2
    err = _one_line(capsys)
    assert err.startswith(f"sunset comment: {report}: ") and said in err


def test_special_files_as_the_report_to_comment(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["comment", "--report", "/dev/zero", "--dry-run"]) == 2
    assert _one_line(capsys) == ("sunset comment: /dev/zero: cannot read the report: not a regular file "
                                 "(a character device)\n")


@pytest.mark.parametrize(("name", "said"), [
    ("/", "give a file name (it says the kind of the file)"),
    ("ci/", "give a file name (it says the kind of the file)"),
    ("a" * 300 + ".yml", "not a file name this system could have"),
])
def test_stdin_filename(repo: Path, name: str, said: str) -> None:
    done = sunset("scan", "-", "--stdin-filename", name, stdin=JWT_JOB.encode(), cwd=repo, **HANG_GUARD)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith("sunset: --stdin-filename ") and done.stderr.endswith(f": {said}\n")


def test_a_deep_stdin_filename_is_fine(repo: Path) -> None:
    name = "ab/" * 40 + ".gitlab-ci.yml"
    done = sunset("scan", "-", "--stdin-filename", name, "--format", "concise", stdin=JWT_JOB.encode(), cwd=repo,
                  **HANG_GUARD)
    assert done.returncode == 1 and done.stdout.startswith(f"{name}:2:18: error[ci-job-jwt-variables]")


def test_binary_standard_input_is_not_read_whole(repo: Path) -> None:
    with open("/dev/zero", "rb") as zero:
        done = sunset("scan", "-", "--max-file-size", "3000000000", stdin=zero, cwd=repo, **HANG_GUARD)
    assert done.returncode == 1
    assert "-: binary file (contains NUL bytes); not scanned" in done.stdout


# ------------------------------------------------------------- the repository's own configuration


@pytest.mark.parametrize("named", ["../outside/secret.yml", "/etc/passwd"])
def test_ci_config_path_outside_the_repository_is_not_read(repo: Path, named: str,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    outside = repo.parent / "outside"
    outside.mkdir()
    (outside / "secret.yml").write_text(JWT_JOB.replace("job", "secret_job"), encoding="utf-8")
    (repo / ".sunset.yml").write_text(f"ci_config_path: {named}\n", encoding="utf-8")
    assert main(["scan", ".", "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert [(f["path"], f["line"]) for f in report["findings"]] == [(".gitlab-ci.yml", 2)]
    assert [(e["path"], e["line"], e["message"]) for e in report["errors"]] == [
        (".sunset.yml", 1, f"CI/CD configuration file `{named}` is outside the repository ({repo}); not read")]


def test_the_command_line_may_name_any_file(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--ci-config` is the user's own choice, not the repository's: it is read wherever it is."""
    other = repo.parent / "elsewhere.yml"
    other.write_text(JWT_JOB, encoding="utf-8")
    main(["scan", ".", "--ci-config", str(other), "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert {(f["path"], f["line"]) for f in report["findings"]} == {(".gitlab-ci.yml", 2), (str(other), 2)}


def test_configuration_baseline_outside_the_repository(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / ".sunset.yml").write_text("baseline: /dev/zero\n", encoding="utf-8")
    assert main(["scan", "."]) == 2
    assert _one_line(capsys) == f"sunset: /dev/zero: the baseline named by the configuration is outside the repository ({repo})\n"


@pytest.mark.parametrize("name", [".sunset.yml", "pyproject.toml"])
def test_a_configuration_file_linked_to_outside_the_repository_is_not_read(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """A tree's own files cannot make sunset read (or apply) a file elsewhere: the link is refused
    before its target is opened, here a target sunset would otherwise accept and apply."""
    outside = tmp_path / "elsewhere" / name
    outside.parent.mkdir()
    outside.write_text("fail_on: never\n" if name == ".sunset.yml" else '[tool.sunset]\nfail_on = "never"\n',
                       encoding="utf-8")
    (repo / name).symlink_to(outside)
    (repo / ".gitlab-ci.yml").write_text(JWT_JOB, encoding="utf-8")
    assert main(["scan", "."]) == 2
    assert _one_line(capsys) == (f"sunset: {repo}/{name}: a link to a file outside the repository ({outside}); "
                                 "sunset reads no configuration from outside the tree it found it in (name a file "
                                 "with --config to use one)\n")
    assert main(["scan", ".", "--config", str(outside), "--format", "concise"]) == 0  # named: read and applied
    capsys.readouterr()
    inside = repo / "settings" / name
    inside.parent.mkdir()
    inside.write_text(outside.read_text(encoding="utf-8"), encoding="utf-8")
    (repo / name).unlink()
    (repo / name).symlink_to(inside)  # a link inside the repository is followed
    assert main(["scan", "."]) == 0


def test_ci_config_path_list_of_a_list(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / ".sunset.yml").write_text("ci_config_path: [a.yml, [b]]\n", encoding="utf-8")
    assert main(["scan", "."]) == 2
    assert _one_line(capsys) == f"sunset: {repo}/.sunset.yml:1: ci_config_path.1: Input should be a valid string\n"


# ------------------------------------------------------------- wildcard includes


def test_a_wildcard_include_leaves_other_kinds_alone(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "config").mkdir()
    (repo / "config" / "database.yml").write_text(DATABASE, encoding="utf-8")
    (repo / "ci").mkdir()
    (repo / "ci" / "jobs.yml").write_text(JWT_JOB.replace("job", "other"), encoding="utf-8")
    (repo / ".gitlab-ci.yml").write_text("include: '**.yml'\n" + JWT_JOB, encoding="utf-8")
    main(["scan", ".", "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert {(f["rule_id"], f["path"], f["line"], f["column"]) for f in report["findings"]} == {
        ("ci-job-jwt-variables", ".gitlab-ci.yml", 3, 18),
        ("ci-job-jwt-variables", "ci/jobs.yml", 2, 18),
        ("database-main-first", "config/database.yml", 2, 3),
    }


@pytest.mark.slow
def test_a_thousand_wildcards_over_twenty_thousand_files(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Bounded: one error names the limit, and the run ends well within the budget (a hang catcher)."""
    files = repo / "many"
    one = repo / "one.yml"
    one.write_text("x: 1\n", encoding="utf-8")
    for i in range(200):
        folder = files / f"d{i}"
        folder.mkdir(parents=True)
        for j in range(100):
            os.link(one, folder / f"f{j}.yml")  # 20,000 names of one file: a tenth of the time of writing each
    patterns = "".join(f"  - local: 'nothing/{i}/**.yml'\n" for i in range(1000))
    (repo / ".gitlab-ci.yml").write_text("include:\n" + patterns + JWT_JOB, encoding="utf-8")
    started = time.monotonic()
    main(["scan", ".gitlab-ci.yml", "--format", "json"])
    assert time.monotonic() - started < 60
    report = json.loads(capsys.readouterr().out)
    limit = [e for e in report["errors"] if "not expanded" in e["message"]]
    assert limit[0]["message"] == ("local include pattern `nothing/49/**.yml` not expanded: over 150 includes, or "
                                   "over 1,000,000 file names tested by wildcards, in this pipeline")
