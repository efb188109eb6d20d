"""Configuration as users expect it: `.sunset.yml` or `[tool.sunset]` in pyproject.toml, found from
the working directory up to the repository root; `exclude` with gitignore's meaning (pathspec);
`--select/--ignore/--exclude/--extend-exclude`; a target written as a number is an error with the fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import sunset

SCRIPT = '#!/bin/sh\ngitlab-runner register --url https://gitlab.example.com --registration-token "$TOKEN"\n'
CI = "include:\n  - template: Terraform.gitlab-ci.yml\n"
SCRIPT_HIT = ("runner-registration-token", "scripts/deploy.sh", 2, 57)
CI_HIT = ("terraform-templates", ".gitlab-ci.yml", 2, 15)


def found(cwd: Path, *args: str) -> list[tuple[str, str, int, int]]:
    done = sunset("scan", *args, "--format", "json", cwd=cwd)
    assert done.returncode in (0, 1), done.stderr
    return [(f["rule_id"], f["path"], f["line"], f["column"]) for f in json.loads(done.stdout)["findings"]]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "outer" / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "scripts").mkdir()
    (root / "scripts" / "deploy.sh").write_text(SCRIPT, encoding="utf-8")
    (root / ".gitlab-ci.yml").write_text(CI, encoding="utf-8")
    return root


def test_sunset_yml_is_found_in_a_parent_up_to_the_repository_root(repo: Path) -> None:
    (repo / ".sunset.yml").write_text("policies:\n  ignore: [terraform-templates]\n", encoding="utf-8")
    assert found(repo / "scripts", ".") == [("runner-registration-token", "deploy.sh", 2, 57)]
    assert found(repo / "scripts", str(repo)) == [SCRIPT_HIT]
    (repo / ".sunset.yml").unlink()
    (repo.parent / ".sunset.yml").write_text("policies:\n  select: [nothing-at-all]\n", encoding="utf-8")
    assert found(repo, ".") == [CI_HIT, SCRIPT_HIT]  # above the repository root: not read


def test_tool_sunset_in_pyproject(repo: Path) -> None:
    (repo / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.sunset]\ntarget = "17.0"\nfail-on = "error"\nexclude = ["scripts/"]\n',
        encoding="utf-8")
    done = sunset("scan", ".", "--format", "json", cwd=repo)
    report = json.loads(done.stdout)
    where = [(f["rule_id"], f["path"], f["severity"]) for f in report["findings"]]  # scripts/ excluded
    assert (done.returncode, report["target"], where) == (0, "17.0", [("terraform-templates", ".gitlab-ci.yml",
                                                                        "warning")])  # removed in 18.0
    (repo / ".sunset.yml").write_text("target: '19.0'\n", encoding="utf-8")  # .sunset.yml first, in one folder
    assert json.loads(sunset("scan", ".", "--format", "json", cwd=repo).stdout)["target"] == "19.0"


def test_a_target_written_as_a_number_is_an_error_with_the_fix(repo: Path) -> None:
    (repo / ".sunset.yml").write_text("fail_on: error\ntarget: 17.10  # the release\n", encoding="utf-8")
    done = sunset("scan", ".", cwd=repo)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (f"sunset: {repo / '.sunset.yml'}:2: target: 17.10 is a number (read as 17.1), not a "
                           'release; write it as a string: target: "17.10"\n')
    (repo / ".sunset.yml").unlink()
    (repo / "pyproject.toml").write_text("[tool.sunset]\nfail_on = \"error\"\ntarget = 18.0\n", encoding="utf-8")
    done = sunset("scan", ".", cwd=repo)
    assert done.stderr == (f"sunset: {repo / 'pyproject.toml'}:3: target: 18.0 is a number, not a release; "
                           'write it as a string: target = "18.0"\n')


@pytest.mark.parametrize("pattern", ["scripts/", "scripts", "*.sh", "deploy.sh", "scripts/*", "**/*.sh", "/scripts"])
def test_exclude_has_gitignore_semantics(repo: Path, pattern: str) -> None:
    (repo / ".sunset.yml").write_text(f"exclude: [{json.dumps(pattern)}]\n", encoding="utf-8")
    assert found(repo, ".") == [CI_HIT]
    assert found(repo / "scripts", "..") == [CI_HIT]  # matched from the file's folder, wherever sunset runs


def test_exclude_negation_and_anchoring(repo: Path) -> None:
    (repo / "scripts" / "keep.sh").write_text(SCRIPT, encoding="utf-8")
    (repo / ".sunset.yml").write_text("exclude: ['*.sh', '!keep.sh', '/.gitlab-ci.yml']\n", encoding="utf-8")
    assert found(repo, ".") == [("runner-registration-token", "scripts/keep.sh", 2, 57)]


def test_select_ignore_exclude_flags(repo: Path) -> None:
    (repo / ".sunset.yml").write_text("exclude: ['*.sh']\npolicies:\n  ignore: [terraform-templates]\n")
    assert found(repo, ".") == []
    assert found(repo, ".", "--exclude", "nothing", "--select", "terraform-templates,runner-registration-token") == [
        SCRIPT_HIT]  # --select replaces the file's select, the file's ignore still holds
    assert found(repo, ".", "--exclude", "", "--ignore", "runner-registration-token") == []
    (repo / ".sunset.yml").unlink()
    assert found(repo, ".", "--extend-exclude", "scripts/") == [CI_HIT]
    assert found(repo, ".", "--ignore", "terraform-templates", "--ignore", "runner-registration-token") == []
    done = sunset("scan", ".", "--select", "terraform-templates,no-such-policy", cwd=repo)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == ("sunset: --select: 'no-such-policy' is no policy id, id prefix or group (groups: agent, "
                           "api, ci, other, runner, security, settings); see `sunset policies list`\n")
