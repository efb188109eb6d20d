"""`--output FORMAT=FILE` (one run, several formats), `--quiet`, `--exit-zero`, and the one exit-code
table (scanner/core/exits.py) through the real command, with exact output."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import sunset

CI = "include:\n  - template: Terraform.gitlab-ci.yml\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / ".gitlab-ci.yml").write_text(CI, encoding="utf-8")
    return tmp_path / "repo"


def test_one_run_writes_every_format_it_is_asked_for(repo: Path) -> None:
    out = repo.parent
    both = sunset("scan", ".", "--color", "never", "-o", f"json={out / 'r.json'}", "-o",
                  f"codequality={out / 'cq.json'}", "-o", f"sarif={out / 'r.sarif'}", cwd=repo)
    assert both.returncode == 1 and both.stderr == ""
    assert both.stdout == sunset("scan", ".", "--color", "never", cwd=repo).stdout  # stdout keeps --format
    assert both.stdout.startswith(".gitlab-ci.yml:2:15: error[terraform-templates] ")
    for fmt, name in (("json", "r.json"), ("codequality", "cq.json"), ("sarif", "r.sarif")):
        alone = sunset("scan", ".", "--format", fmt, cwd=repo)
        assert (out / name).read_text(encoding="utf-8") == alone.stdout, fmt


def test_plain_output_file_replaces_stdout(repo: Path) -> None:
    done = sunset("scan", ".", "--format", "json", "-o", str(repo.parent / "r.json"), cwd=repo)
    assert (done.returncode, done.stdout, done.stderr) == (1, "", "")
    alone = sunset("scan", ".", "--format", "json", cwd=repo).stdout
    assert (repo.parent / "r.json").read_text(encoding="utf-8") == alone


def test_unwritable_output_is_one_line_and_exit_2_and_the_others_are_written(repo: Path) -> None:
    good = repo.parent / "r.json"
    done = sunset("scan", ".", "-o", "sarif=/missing/dir/x.sarif", "-o", f"json={good}", "--quiet", cwd=repo)
    assert (done.returncode, done.stdout) == (2, "")
    missing = "the folder /missing/dir does not exist"
    assert done.stderr == f"sunset: cannot write sarif report to /missing/dir/x.sarif: {missing}\n"
    assert '"rule_id": "terraform-templates"' in good.read_text(encoding="utf-8")
    plain = sunset("scan", ".", "-o", "/missing/dir/x.json", cwd=repo)
    assert (plain.returncode, plain.stdout) == (2, "")
    assert plain.stderr == f"sunset: cannot write text report to /missing/dir/x.json: {missing}\n"


def test_output_usage_errors(repo: Path) -> None:
    done = sunset("scan", ".", "-o", "xml=report.xml", cwd=repo)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == ("sunset: --output xml=report.xml: unknown format 'xml' (one of: text, concise, json, "
                           "sarif, codequality, markdown, html); a file whose name holds '=' can be written "
                           "./xml=report.xml\n")
    empty = sunset("scan", ".", "-o", "json=", cwd=repo)
    assert (empty.returncode, empty.stderr) == (
        2, "sunset: --output json=: give a file name (stdout receives --format unless --quiet)\n")


def test_quiet_and_exit_zero(repo: Path) -> None:
    quiet = sunset("scan", ".", "--quiet", "-o", f"codequality={repo.parent / 'cq.json'}", cwd=repo)
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (1, "", "")
    assert '"check_name": "terraform-templates"' in (repo.parent / "cq.json").read_text(encoding="utf-8")
    zero = sunset("scan", ".", "--exit-zero", "--format", "json", cwd=repo)
    assert zero.returncode == 0 and '"rule_id": "terraform-templates"' in zero.stdout
    assert sunset("scan", ".", "--fail-on", "never", cwd=repo).returncode == 0
    assert sunset("scan", ".", "--exit-zero", "--target", "x", cwd=repo).returncode == 2  # could not run


def test_input_errors_follow_the_threshold(repo: Path) -> None:
    (repo / ".gitlab-ci.yml").write_text("a: [\n", encoding="utf-8")
    assert sunset("scan", ".", "--fail-on", "error", cwd=repo).returncode == 1
    assert sunset("scan", ".", "--fail-on", "never", cwd=repo).returncode == 0
    assert sunset("scan", ".", "--exit-zero", cwd=repo).returncode == 0


def test_write_baseline_records_and_exits_0(repo: Path) -> None:
    baseline = repo.parent / "b.json"
    done = sunset("scan", ".", "--write-baseline", str(baseline), cwd=repo)
    assert (done.returncode, done.stdout) == (0, "")
    assert done.stderr == f"sunset: wrote 1 fingerprints to {baseline}\n"
    assert sunset("scan", ".", "--baseline", str(baseline), cwd=repo).returncode == 0


def test_fix_diff_exits_1_when_it_prints_a_change(tmp_path: Path) -> None:
    (tmp_path / ".gitlab-ci.yml").write_text("job:\n  script: [x]\n  variables:\n    CI_DEBUG_SERVICES: 'true'\n")
    clean = sunset("fix", "--diff", ".", cwd=tmp_path)
    assert (clean.returncode, clean.stdout) == (0, "")
    (tmp_path / "values.yaml").write_text("config:\n  caCert: |\n    x\n", encoding="utf-8")
    agent = sunset("fix", "--diff", "--unsafe", ".", cwd=tmp_path)
    assert agent.returncode == 1
    assert agent.stdout.startswith("--- a/values.yaml\n+++ b/values.yaml\n")
