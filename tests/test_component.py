"""The CI/CD component `templates/sunset.yml`: read by sunset's own readers, its `spec:inputs` checked
against GitLab's rules for inputs, the example in `samples/ci/sunset.yml` checked against the spec, and
its job's script run for real (the installed wheel, a real merge-request notes server on 127.0.0.1).

GitLab's rules (doc/ci/inputs/_index.md, doc/ci/components/_index.md in gitlab-org/gitlab): an input
has `default`, `description`, `options`, `regex`, `type` (`string` when not given, `array`, `number`,
`boolean`) and `rules`; without a `default` it is mandatory; `$[[ inputs.name ]]` interpolates it; the
header is separated from the jobs by `---`; a component is `templates/<name>.yml`, included as
`<fqdn>/<project path>/<name>@<version>`.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

from scanner import __version__
from scanner.core.files import is_pipeline_root
from scanner.readers.yamldoc import load_yaml

from conftest import ROOT, sunset
from test_comment import BOT, FakeGitLab, ci_env, fake  # noqa: F401  (fake: the notes server)

COMPONENT = ROOT / "templates" / "sunset.yml"
INPUT_KEYS = {"default", "description", "options", "regex", "type", "rules"}
TYPES = {"string", "array", "number", "boolean"}
INTERPOLATION = re.compile(r"\$\[\[\s*inputs\.([A-Za-z0-9_-]+)\s*\]\]")


def _documents() -> list[Any]:
    return list(load_yaml(COMPONENT.read_text(encoding="utf-8"), str(COMPONENT)).roots)


def _inputs() -> dict[str, dict[str, Any]]:
    return _documents()[0]["spec"]["inputs"]  # type: ignore[no-any-return]


def test_sunset_reads_it_as_a_component_and_finds_nothing_in_it() -> None:
    assert is_pipeline_root(COMPONENT)  # templates/<name>.yml with a spec: header
    done = sunset("scan", COMPONENT, "--format", "json", cwd=ROOT)
    report = json.loads(done.stdout)
    assert (done.returncode, report["findings"], report["errors"], report["summary"]["files_scanned"]) == (0, [], [], 1)


def test_the_spec_follows_gitlabs_rules_for_inputs() -> None:
    header, jobs = _documents()
    assert list(header) == ["spec"] and list(header["spec"]) == ["inputs"]
    inputs = _inputs()
    assert list(inputs) == ["stage", "target", "fail_on", "new_only", "allow_failure", "paths", "comment", "image",
                            "version"]
    for name, spec in inputs.items():
        assert set(spec) <= INPUT_KEYS, name
        assert spec.get("type", "string") in TYPES, name
        assert "default" in spec and spec.get("description"), name  # every input optional and described
        if "options" in spec:
            assert spec["default"] in spec["options"], name
        if "regex" in spec:
            assert re.fullmatch(spec["regex"], spec["default"]), name
        if spec.get("type") == "boolean":
            assert isinstance(spec["default"], bool), name
    assert inputs["version"]["default"] == __version__  # the component installs its own release
    assert inputs["fail_on"]["options"] == ["error", "warning", "info", "never"]
    assert (inputs["fail_on"]["default"], inputs["new_only"], inputs["allow_failure"]["default"]) == (
        "error", {"type": "boolean", "default": True, "description": inputs["new_only"]["description"]}, False)
    body = COMPONENT.read_text(encoding="utf-8").split("\n---\n", 1)[1]
    assert set(INTERPOLATION.findall(body)) == set(inputs)  # every input used, none undeclared
    assert list(jobs) == ["sunset"]


def test_allow_failure_is_a_whole_value_so_gitlab_interpolates_it_as_a_boolean() -> None:
    """GitLab interpolates an input as its type only when it is the whole YAML value
    (doc/ci/inputs/_index.md, "Input types"); `allow_failure` takes a boolean."""
    job = _documents()[1]["sunset"]
    assert job["allow_failure"] == "$[[ inputs.allow_failure ]]"
    assert _inputs()["allow_failure"]["type"] == "boolean"


def test_the_sample_includes_it_with_valid_inputs() -> None:
    data = load_yaml((ROOT / "samples" / "ci" / "sunset.yml").read_text(encoding="utf-8"), "sunset.yml")
    (entry,) = data.roots[0]["include"]
    assert entry["component"] == f"$CI_SERVER_FQDN/gitlab-sunset/gitlab-sunset/sunset@{__version__}"
    inputs = _inputs()
    for name, value in entry["inputs"].items():
        spec = inputs[name]
        assert value in spec.get("options", [value]) and re.fullmatch(spec.get("regex", ".*"), value), name


def _script(values: dict[str, Any]) -> str:
    """The job's script with the inputs interpolated as GitLab does (whole values keep their type)."""
    inputs = {name: spec["default"] for name, spec in _inputs().items()} | values
    job = _documents()[1]["sunset"]

    def text(value: Any) -> str:
        return "true" if value is True else "false" if value is False else str(value)

    lines = [INTERPOLATION.sub(lambda m: text(inputs[m.group(1)]), line) for line in job["script"]]
    variables = {k: INTERPOLATION.sub(lambda m: text(inputs[m.group(1)]), str(v)) for k, v in job["variables"].items()}
    exports = [f"export {k}={json.dumps(v)}" for k, v in variables.items()]
    return "\n".join(["set -eo pipefail", *exports, *lines]) + "\n"


def _run_job(
    venv: Path, release: Path, repo: Path, env: dict[str, str], **values: Any
) -> subprocess.CompletedProcess[str]:
    environ = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(repo.parent), "PIP_FIND_LINKS": str(release),
               "PIP_NO_INDEX": "1", **env}
    return subprocess.run(["bash", "-c", _script(values)], capture_output=True, text=True, cwd=repo, env=environ,
                          timeout=300)


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "project"
    repo.mkdir()
    (repo / ".gitlab-ci.yml").write_text("include:\n  - template: Terraform.gitlab-ci.yml\n", encoding="utf-8")
    return repo


def test_the_job_writes_three_reports_in_one_run_and_fails_on_findings(
    venv: Path, release: Path, tmp_path: Path
) -> None:
    repo = _repo(tmp_path)
    recorded = _run_job(venv, release, repo, {}, target="18.0")  # a default-branch pipeline records, never fails
    assert recorded.returncode == 0, recorded.stderr
    done = _run_job(venv, release, repo, {}, target="18.0", new_only=False)
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith(".gitlab-ci.yml:2:15: error[terraform-templates] ")
    quality = json.loads((repo / "gl-code-quality-report.json").read_text(encoding="utf-8"))
    assert [(q["check_name"], q["location"]["path"], q["location"]["lines"]["begin"]) for q in quality] == [
        ("terraform-templates", ".gitlab-ci.yml", 2)]
    report = json.loads((repo / "sunset.json").read_text(encoding="utf-8"))
    assert (report["target"], [f["rule_id"] for f in report["findings"]]) == ("18.0", ["terraform-templates"])
    sarif = json.loads((repo / "sunset.sarif").read_text(encoding="utf-8"))
    assert [r["ruleId"] for r in sarif["runs"][0]["results"]] == ["terraform-templates"]
    assert _run_job(venv, release, repo, {}, fail_on="never", new_only=False).returncode == 0
    next_major = _run_job(venv, release, repo, {"CI_SERVER_VERSION_MAJOR": "17"})  # no target: 18.0, after 17.x
    assert json.loads((repo / "sunset.json").read_text(encoding="utf-8"))["target"] == "18.0", next_major.stderr


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), "-c", "user.name=dev", "-c", "user.email=dev@example.com",
                           "-c", "init.defaultBranch=main", *args], capture_output=True, text=True, check=True)
    return done.stdout.strip()


BASE_CI = "include:\n  - template: Terraform.gitlab-ci.yml\n\ndeploy:\n  script: [./deploy.sh]\n"


def test_a_merge_request_is_compared_with_its_target_branch(
    venv: Path, release: Path, tmp_path: Path, fake: FakeGitLab  # noqa: F811
) -> None:
    """A clone of the merge request's branch, as a runner makes it (shallow, that branch only): the job
    fetches the target branch, compares with the merge base, fails only on what the merge request adds,
    and keeps one note."""
    origin, work = tmp_path / "origin.git", tmp_path / "work"
    _git(tmp_path, "init", "--bare", str(origin))
    _git(tmp_path, "init", str(work))
    (work / ".gitlab-ci.yml").write_text(BASE_CI, encoding="utf-8")
    _git(work, "add", ".")
    _git(work, "commit", "-m", "main")
    base = _git(work, "rev-parse", "HEAD")
    _git(work, "push", str(origin), "HEAD:main")
    _git(work, "checkout", "-b", "feature")
    added = BASE_CI.replace("deploy:\n", "deploy:\n  type: deploy\n")  # one deprecated line
    (work / ".gitlab-ci.yml").write_text(added, encoding="utf-8")
    _git(work, "commit", "-am", "add a deprecated line")
    _git(work, "push", str(origin), "feature")
    project = tmp_path / "project"
    # GitLab's default GIT_DEPTH (20): deep enough for the branch, without the target branch
    _git(tmp_path, "clone", "--quiet", "--depth", "20", "--branch", "feature", "--single-branch", origin.as_uri(),
         str(project))
    env = ci_env(fake) | {"CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main", "CI_MERGE_REQUEST_DIFF_BASE_SHA": base,
                          "CI_SERVER_VERSION_MAJOR": "17"}

    done = _run_job(venv, release, project, env)
    assert done.returncode == 1, done.stderr  # the merge request adds what breaks on 18.0
    assert done.stdout.startswith(".gitlab-ci.yml:5:3: error[ci-type-types-keywords] ")
    assert "terraform-templates" not in done.stdout  # already on main: counted, not listed
    (note,) = [n for n in fake.notes if n["author"]["id"] == BOT["id"]]
    body = note["body"]
    assert "### sunset: this merge request adds 1 finding that breaks on GitLab 18.0\n" in body
    assert f"Compared with `{base}` at `{base[:12]}` (the merge base): **1 new**, 0 fixed, 1 already there" in body
    assert "/-/blob/0123456789abcdef/.gitlab-ci.yml#L5)" in body and "terraform-templates" not in body

    (project / ".gitlab-ci.yml").write_text(added.replace("include:\n  - template: Terraform.gitlab-ci.yml\n\n", ""),
                                            encoding="utf-8")  # the merge request now also removes one
    _git(project, "commit", "-am", "drop the Terraform template")
    again = _run_job(venv, release, project, env)
    assert again.returncode == 1, again.stderr
    assert [n["id"] for n in fake.notes if n["author"]["id"] == BOT["id"]] == [note["id"]]  # edited, not re-posted
    assert "#### Fixed by this merge request (1)" in note["body"] and "`terraform-templates`" in note["body"]
    assert "**1 new**, 1 fixed, 0 already there" in note["body"]
    assert [m for m, path in fake.log if m == "POST"] == ["POST"]
def test_on_a_merge_request_the_job_posts_the_sticky_comment(
    venv: Path, release: Path, tmp_path: Path, fake: FakeGitLab  # noqa: F811
) -> None:
    repo = _repo(tmp_path)
    env = ci_env(fake)
    done = _run_job(venv, release, repo, env, fail_on="never")
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith("sunset comment: created note 1230 on merge request !7\n")
    (note,) = [n for n in fake.notes if n["author"]["id"] == BOT["id"]]
    assert "terraform-templates" in note["body"]
    off = _run_job(venv, release, repo, env, fail_on="never", comment=False)
    assert off.returncode == 0 and "sunset comment" not in off.stdout
