"""What a merge request adds and removes (`sunset scan --diff-base REF`, `sunset comment --base-report`):
real git repositories, the real `sunset scan` and `sunset comment`, and the notes server of
tests/test_comment.py standing in for GitLab. Findings are matched by fingerprint, as GitLab's Code
Quality widget matches them."""

from __future__ import annotations

import json
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_output_formats import sarif_validator  # noqa: F401  (the OASIS schema)

from scanner.cli import main
from scanner.commands import comment

from test_comment import BOT, NOTES_PATH, FakeGitLab, ci_env, fake, parse  # noqa: F401  (fake: the notes server)

BASE_CI = "include:\n  - template: Terraform.gitlab-ci.yml\n\ndeploy:\n  script: [./deploy.sh]\n"
ADDED = BASE_CI.replace("deploy:\n", "deploy:\n  type: deploy\n")  # one deprecated line
TERRAFORM = "include:\n  - template: Terraform.gitlab-ci.yml\n\n"


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), "-c", "user.name=dev", "-c", "user.email=dev@example.com",
                           "-c", "init.defaultBranch=main", *args], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def commit(repo: Path, text: str, message: str) -> str:
    (repo / ".gitlab-ci.yml").write_text(text, encoding="utf-8")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    git(tmp_path, "init", "-q", str(root))
    commit(root, BASE_CI, "main")
    git(root, "checkout", "-q", "-b", "feature")
    monkeypatch.chdir(root)
    return root


def scan(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    capsys.readouterr()
    code = main(["scan", ".", "--target", "18.0", "--fail-on", "error", "--format", "json", *args])
    return code, json.loads(capsys.readouterr().out)


def changes(data: dict[str, Any]) -> list[tuple[str, int, str]]:
    return [(f["rule_id"], f["line"], f["change"]) for f in data["findings"]]


def test_the_scan_says_what_the_change_adds_and_fails_only_on_that(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = git(repo, "rev-parse", "main")
    assert scan(capsys, "--diff-base", "main")[0] == 0  # the branch adds nothing yet: main's finding does not fail
    commit(repo, ADDED, "add a deprecated line")
    code, data = scan(capsys, "--diff-base", "main")
    assert code == 1
    assert changes(data) == [("terraform-templates", 2, "existing"), ("ci-type-types-keywords", 5, "new")]
    assert {k: v for k, v in data["diff"].items() if k != "fixed"} == {
        "base": "main", "commit": base, "note": "", "new": 1, "existing": 1, "new_errors": 0}
    assert data["diff"]["fixed"] == []
    capsys.readouterr()
    assert main(["scan", ".", "--target", "18.0", "--diff-base", "main", "--color", "never"]) == 1
    text = capsys.readouterr().out
    assert text.startswith(".gitlab-ci.yml:5:3: error[ci-type-types-keywords] ") and "terraform" not in text
    assert text.rstrip().endswith(f"Against main (merge base {base[:12]}): 1 new (1 error), listed; 1 already "
                                  "there (1 error), not listed; 0 fixed.")
    moved = "# a comment line\n\n" + ADDED  # every finding two lines down: the same fingerprints
    commit(repo, moved, "move everything down")
    git(repo, "checkout", "-q", "main")
    commit(repo, "# a comment line\n\n" + BASE_CI, "main moves too")
    git(repo, "checkout", "-q", "feature")
    code, data = scan(capsys, "--diff-base", "main")  # the merge base is still the first commit
    assert changes(data) == [("terraform-templates", 4, "existing"), ("ci-type-types-keywords", 7, "new")]


def test_a_fixed_finding_is_listed_as_fixed(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    commit(repo, ADDED.replace(TERRAFORM, ""), "drop the template, add a type")
    code, data = scan(capsys, "--diff-base", "main")
    assert (code, changes(data)) == (1, [("ci-type-types-keywords", 2, "new")])
    assert [(f["rule_id"], f["path"], f["line"]) for f in data["diff"]["fixed"]] == [
        ("terraform-templates", ".gitlab-ci.yml", 2)]
    commit(repo, BASE_CI.replace(TERRAFORM, ""), "and no type")
    code, data = scan(capsys, "--diff-base", "main")
    assert (code, changes(data), len(data["diff"]["fixed"])) == (0, [], 1)


def note_of(gl: FakeGitLab) -> dict[str, Any]:
    (note,) = [n for n in gl.notes if n["author"]["id"] == BOT["id"]]
    return note


def post(report: str, env: dict[str, str], *flags: str) -> int:
    from scanner.gitlab import retry

    return comment.run(parse("--report", report, *flags), retry=retry.RetryPolicy(sleep=lambda s: None), env=env)


def test_the_comment_shows_what_the_merge_request_adds_and_fixes_in_one_sticky_note(
    repo: Path, capsys: pytest.CaptureFixture[str], fake: FakeGitLab  # noqa: F811
) -> None:
    base = git(repo, "rev-parse", "main")
    env = ci_env(fake, CI_JOB_URL=f"{fake.base}/group/project/-/jobs/99", CI_MERGE_REQUEST_PROJECT_URL=
                 f"{fake.base}/group/project")
    commit(repo, ADDED, "add a deprecated line")
    assert main(["scan", ".", "--diff-base", "main", "--target", "18.0", "-q", "-o", "json=sunset.json"]) == 1
    assert post("sunset.json", env) == 0
    note = note_of(fake)
    docs = "https://docs.gitlab.com/update/deprecations/#type-and-types-keyword-in-cicd-configuration"
    link = f"{fake.base}/group/project/-/blob/0123456789abcdef/.gitlab-ci.yml#L5"
    assert note["body"].split("<details>")[0] == (
        "<!-- sunset:report -->\n\n"
        "### sunset: this merge request adds 1 finding that breaks on GitLab 18.0\n\n"
        f"Compared with `main` at `{base[:12]}` (the merge base): **1 new**, 0 fixed, 1 already there, not listed "
        f"([full report]({fake.base}/group/project/-/jobs/99/artifacts/file/sunset.json)).\n\n"
        "#### Added, removed in GitLab 15.0 (1)\n\n"
        "| Severity | Where | Policy |\n| --- | --- | --- |\n"
        f"| error | [`.gitlab-ci.yml:5`]({link}) | [`ci-type-types-keywords`]({docs}) `types:` and `type:` keywords "
        "in CI/CD configuration |\n\n")
    assert "terraform-templates" not in note["body"]

    commit(repo, ADDED.replace(TERRAFORM, ""), "and drop the template")
    assert main(["scan", ".", "--diff-base", "main", "--target", "18.0", "-q", "-o", "json=sunset.json"]) == 1
    assert post("sunset.json", env) == 0
    assert note_of(fake) is note  # the same note, edited
    fixed = note["body"].split("#### Fixed by this merge request (1)\n\n")[1].split("\n\n")[0]
    before = f"{fake.base}/group/project/-/blob/{base}/.gitlab-ci.yml#L2"
    assert fixed.splitlines()[2].startswith(f"| error | [`.gitlab-ci.yml:2`]({before}) | [`terraform-templates`](")
    assert "**1 new**, 1 fixed, 0 already there." in note["body"]

    commit(repo, BASE_CI, "back to main's text")
    assert main(["scan", ".", "--diff-base", "main", "--target", "18.0", "-q", "-o", "json=sunset.json"]) == 0
    assert post("sunset.json", env) == 0
    assert note["body"].startswith("<!-- sunset:report -->\n\n### sunset: nothing new for GitLab 18.0\n\nThis merge "
                                   "request adds no deprecated or removed GitLab feature; compared with `main`: "
                                   "1 finding already there, not listed.\n")
    assert [m for m, path in fake.log if m in ("POST", "PUT")] == ["POST", "PUT", "PUT"]


def test_a_clean_merge_request_gets_no_comment(
    repo: Path, capsys: pytest.CaptureFixture[str], fake: FakeGitLab  # noqa: F811
) -> None:
    commit(repo, BASE_CI + "\nbuild:\n  script: [make]\n", "a new job, nothing deprecated")
    assert main(["scan", ".", "--diff-base", "main", "-q", "-o", "json=sunset.json"]) == 0
    assert post("sunset.json", ci_env(fake)) == 0
    assert [n for n in fake.notes if n["author"]["id"] == BOT["id"]] == []
    assert "nothing to report and no earlier note" in capsys.readouterr().out


def test_the_target_branchs_report_gives_the_same_comment(
    repo: Path, capsys: pytest.CaptureFixture[str], fake: FakeGitLab  # noqa: F811
) -> None:
    """`sunset comment --base-report` (a report the target branch's pipeline left as an artifact)."""
    git(repo, "checkout", "-q", "main")
    assert main(["scan", ".", "--target", "18.0", "-q", "-o", "json=base.json", "--fail-on", "never"]) == 0
    git(repo, "checkout", "-q", "feature")
    commit(repo, ADDED.replace(TERRAFORM, ""), "add one, drop one")
    assert main(["scan", ".", "--target", "18.0", "-q", "-o", "json=head.json", "--fail-on", "never"]) == 0
    env = ci_env(fake, CI_MERGE_REQUEST_TARGET_BRANCH_NAME="main")
    assert post("head.json", env, "--base-report", "base.json") == 0
    body = note_of(fake)["body"]
    assert "### sunset: this merge request adds 1 finding that breaks on GitLab 18.0\n\nCompared with `main`: " \
           "**1 new**, 1 fixed, 0 already there.\n\n#### Added, removed in GitLab 15.0 (1)\n" in body
    assert "#### Fixed by this merge request (1)" in body and "`terraform-templates`" in body
    (repo / "broken.json").write_text('{"version": 1}', encoding="utf-8")
    assert post("head.json", env, "--base-report", "broken.json") == 2
    assert "broken.json: not a sunset JSON report" in capsys.readouterr().err


def test_without_the_merge_base_it_compares_with_the_ref_and_says_so(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    commit(repo, ADDED, "add a deprecated line")
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", "--branch", "feature", repo.as_uri(), str(shallow))
    git(shallow, "fetch", "-q", "--depth", "1", "origin", "main")
    monkeypatch.chdir(shallow)
    code, data = scan(capsys, "--diff-base", "FETCH_HEAD")
    assert (code, changes(data)) == (1, [("terraform-templates", 2, "existing"), ("ci-type-types-keywords", 5, "new")])
    assert data["diff"]["note"] == ("no common history with HEAD in this clone (shallow?); compared with FETCH_HEAD "
                                    "itself")


@pytest.mark.parametrize(("args", "message"), [
    (["--diff-base", "no-such-branch"], "sunset: --diff-base: 'no-such-branch' is not a commit in this clone; fetch "
     "it first (git fetch origin no-such-branch), or in GitLab CI give the merge request's "
     "$CI_MERGE_REQUEST_DIFF_BASE_SHA\n"),
    (["-", "--diff-base", "main"], "sunset: --diff-base compares files in a repository; it cannot be used with `-`\n"),
])
def test_a_base_that_cannot_be_read_is_a_usage_error(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, args: list[str], message: str
) -> None:
    monkeypatch.setattr("sys.stdin", open(repo / ".gitlab-ci.yml", encoding="utf-8"))  # noqa: SIM115
    capsys.readouterr()
    assert main(["scan", *args]) == 2
    assert capsys.readouterr().err == message


def test_outside_a_git_repository(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / ".gitlab-ci.yml").write_text(ADDED, encoding="utf-8")
    monkeypatch.chdir(tmp_path / "plain")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    assert main(["scan", ".", "--diff-base", "main"]) == 2
    assert capsys.readouterr().err == f"sunset: --diff-base: {tmp_path / 'plain'} is not in a git repository\n"


FINGERPRINTS = st.lists(st.sampled_from([f"{i:032x}" for i in range(12)]), unique=True, max_size=8)


@given(FINGERPRINTS, FINGERPRINTS)
def test_a_base_report_marks_new_existing_and_fixed_by_fingerprint(head: list[str], base: list[str]) -> None:
    def report(prints: list[str]) -> dict[str, Any]:
        return {"version": 1, "target": "18.0", "summary": {}, "errors": [{"path": "x", "line": 1, "message": p}
                                                                           for p in prints[:2]],
                "findings": [{"fingerprint": p, "rule_id": "r"} for p in prints]}

    data = comment.against(report(head), report(base), "main")
    assert [f["change"] for f in data["findings"]] == ["existing" if p in base else "new" for p in head]
    assert [f["fingerprint"] for f in data["diff"]["fixed"]] == [p for p in base if p not in head]
    assert (data["diff"]["new"], data["diff"]["existing"]) == (len(set(head) - set(base)), len(set(head) & set(base)))
    assert [e["change"] for e in data["errors"]] == ["existing" if p in base[:2] else "new" for p in head[:2]]


def test_a_commit_id_as_the_base_is_shown_not_masked(
    repo: Path, capsys: pytest.CaptureFixture[str], fake: FakeGitLab  # noqa: F811
) -> None:
    """CI gives the merge base as `$CI_MERGE_REQUEST_DIFF_BASE_SHA`: 40 hex digits, which look like a token
    to the redactor every report passes through; a commit id is public and stays."""
    base = git(repo, "rev-parse", "main")
    commit(repo, ADDED, "add a deprecated line")
    assert main(["scan", ".", "--diff-base", base, "--target", "18.0", "-q", "-o", "json=sunset.json"]) == 1
    assert post("sunset.json", ci_env(fake)) == 0
    assert f"Compared with `{base}` at `{base[:12]}` (the merge base): **1 new**" in note_of(fake)["body"]


JWT_CI = BASE_CI.replace("./deploy.sh", "vault login $CI_JOB_JWT")  # line 5: ci-job-jwt-variables
JWT_TITLE = "`CI_JOB_JWT`, `CI_JOB_JWT_V1` and `CI_JOB_JWT_V2` were removed"


@pytest.fixture
def three(repo: Path) -> str:
    """main: terraform-templates (line 2) and ci-job-jwt-variables (line 5); the branch keeps the first,
    drops the second and adds ci-type-types-keywords (line 5). Returns the merge base."""
    git(repo, "checkout", "-q", "main")
    base = commit(repo, JWT_CI, "main uses CI_JOB_JWT")
    git(repo, "checkout", "-q", "-B", "feature", "main")
    commit(repo, ADDED, "drop CI_JOB_JWT, add a type")
    return base


def test_sarif_gives_every_result_its_baseline_state(
    repo: Path, three: str, capsys: pytest.CaptureFixture[str], sarif_validator: Any  # noqa: F811
) -> None:
    """SARIF 2.1.0, 3.27.24: `new`, `unchanged`, and `absent` for what the base had and the branch has not;
    on one result, on all of them."""
    capsys.readouterr()
    assert main(["scan", ".", "--target", "18.0", "--diff-base", "main", "--format", "sarif"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert _schema_errors(sarif_validator, doc) == []
    run = doc["runs"][0]
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
             r["locations"][0]["physicalLocation"]["region"]["startLine"], r["baselineState"], rules[r["ruleIndex"]])
            for r in run["results"]] == [
        ("terraform-templates", ".gitlab-ci.yml", 2, "unchanged", "terraform-templates"),
        ("ci-type-types-keywords", ".gitlab-ci.yml", 5, "new", "ci-type-types-keywords"),
        ("ci-job-jwt-variables", ".gitlab-ci.yml", 5, "absent", "ci-job-jwt-variables"),
    ]
    assert run["properties"]["baseline"] == {"base": "main", "commit": three, "note": ""}
    capsys.readouterr()
    assert main(["scan", ".", "--target", "18.0", "--format", "sarif"]) == 1  # no comparison: no state at all
    plain = json.loads(capsys.readouterr().out)["runs"][0]
    assert [("baselineState" in r, r["ruleId"]) for r in plain["results"]] == [
        (False, "terraform-templates"), (False, "ci-type-types-keywords")]
    assert "baseline" not in plain["properties"]


def _schema_errors(validator: Any, doc: dict[str, Any]) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)]


def test_text_and_statistics_count_new_and_existing_apart(
    repo: Path, three: str, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert main(["scan", ".", "--target", "18.0", "--diff-base", "main", "--color", "never"]) == 1
    text = capsys.readouterr().out
    assert text.startswith(".gitlab-ci.yml:5:3: error[ci-type-types-keywords] ")
    assert "terraform" not in text.rsplit("\n\n", 1)[0] and "CI_JOB_JWT" not in text
    assert text.splitlines()[-1] == (
        "Scanned 1 file for GitLab 18.0: 2 error(s), 0 warning(s), 0 info; 0 input error(s); 0 suppressed, "
        f"0 baselined. 1 with `sunset fix --unsafe`. Against main (merge base {three[:12]}): 1 new (1 error), "
        "listed; 1 already there (1 error), not listed; 1 fixed.")
    assert main(["scan", ".", "--target", "18.0", "--diff-base", "main", "--statistics"]) == 1  # new ones decide
    assert capsys.readouterr().out == (
        "new  existing  fixed  policy                       title\n"
        "  1         0      0  ci-type-types-keywords       `types:` and `type:` keywords in CI/CD configuration\n"
        "  0         1      0  terraform-templates          Terraform CI/CD templates are removed in GitLab 18.0\n"
        f"  0         0      1  ci-job-jwt-variables         {JWT_TITLE}\n")
    commit(repo, JWT_CI.replace("vault login $CI_JOB_JWT", "./deploy.sh"), "only main's terraform left")
    assert main(["scan", ".", "--target", "18.0", "--diff-base", "main", "--statistics"]) == 0  # nothing new
    assert capsys.readouterr().out == (
        "new  existing  fixed  policy                     title\n"
        "  0         1      0  terraform-templates        Terraform CI/CD templates are removed in GitLab 18.0\n"
        f"  0         0      1  ci-job-jwt-variables       {JWT_TITLE}\n")


def test_code_quality_is_the_same_report_with_or_without_a_comparison(
    repo: Path, three: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """GitLab's widget compares the branch's report with the target's itself, by fingerprint: the report
    holds every finding, and `--diff-base` changes not a byte of it."""
    assert main(["scan", ".", "--target", "18.0", "-q", "--diff-base", "main", "-o", "codequality=mr.json"]) == 1
    assert main(["scan", ".", "--target", "18.0", "-q", "-o", "codequality=plain.json"]) == 1
    git(repo, "checkout", "-q", "main")
    assert main(["scan", ".", "--target", "18.0", "-q", "-o", "codequality=target.json"]) == 1
    mr, target = (json.loads((repo / name).read_text(encoding="utf-8")) for name in ("mr.json", "target.json"))
    assert (repo / "mr.json").read_bytes() == (repo / "plain.json").read_bytes()
    assert [(q["check_name"], q["location"]["lines"]["begin"]) for q in mr] == [
        ("terraform-templates", 2), ("ci-type-types-keywords", 5)]
    # what the widget will show: by fingerprint, one added, one fixed, the template unchanged
    added = {q["check_name"] for q in mr} - {q["check_name"] for q in target}
    assert {q["fingerprint"] for q in mr} - {q["fingerprint"] for q in target} == {
        q["fingerprint"] for q in mr if q["check_name"] in added} and added == {"ci-type-types-keywords"}
    assert [q["check_name"] for q in target if q["fingerprint"] not in {m["fingerprint"] for m in mr}] == [
        "ci-job-jwt-variables"]


class Marks(HTMLParser):
    """The rows of the findings tables: `data-change` and the `new` marker; the fixed table's rows."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self.cards: dict[str, str] = {}
        self._card: str | None = None
        self._in_row = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "tr" and ("data-change" in a or "data-fixed" in a):
            self.rows.append([f"change={a['data-change']}" if "data-change" in a else "fixed"])
            self._in_row = True
        elif tag == "tr":
            self._in_row = False
        if tag == "span" and a.get("class") == "new" and self._in_row:
            self.rows[-1].append("marked new")
        self._card = a.get("data-k") if tag == "b" else None

    def handle_endtag(self, tag: str) -> None:
        self._card = None

    def handle_data(self, data: str) -> None:
        if self._card:
            self.cards[self._card] = data
        if self._in_row and data.strip():
            self.rows[-1].append(data.strip())


def test_html_marks_new_findings_and_lists_the_fixed_ones(
    repo: Path, three: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["scan", ".", "--target", "18.0", "-q", "--diff-base", "main", "-o", "html=r.html",
                 "-o", "json=r.json"]) == 1
    page = Marks()
    page.feed((repo / "r.html").read_text(encoding="utf-8"))
    diff = json.loads((repo / "r.json").read_text(encoding="utf-8"))["diff"]
    assert {k: int(page.cards[k]) for k in ("new", "existing", "fixed")} == {
        "new": diff["new"], "existing": diff["existing"], "fixed": len(diff["fixed"])} == {
        "new": 1, "existing": 1, "fixed": 1}
    assert [row[:5] for row in page.rows] == [
        ["change=existing", "2:15", "error", "terraform-templates", "18.0"],
        ["change=new", "5:3", "marked new", "new", "error"],
        ["fixed", ".gitlab-ci.yml", "5:24", "error", "ci-job-jwt-variables"],
    ]
    assert "ci-type-types-keywords" in page.rows[1]
    html = (repo / "r.html").read_text(encoding="utf-8")
    assert f"Compared with <code>main</code> (the merge base <code>{three[:12]}</code>)" in html
    assert "<h2>Fixed since main</h2>" in html
    assert main(["scan", ".", "--target", "18.0", "-q", "-o", "html=plain.html"]) == 1
    plain = (repo / "plain.html").read_text(encoding="utf-8")
    assert "data-change" not in plain and 'class="new"' not in plain and "Fixed since" not in plain


def test_a_secret_on_a_fixed_line_is_masked_in_every_report(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The fixed findings come from the base's files: they pass through the same redactor as the rest."""
    token = "glpat-Abcdefghij0123456789"
    git(repo, "checkout", "-q", "main")
    commit(repo, JWT_CI.replace("script: [vault login $CI_JOB_JWT]", f"script: [vault login $CI_JOB_JWT {token}]"),
           "a token on the line")
    git(repo, "checkout", "-q", "-B", "feature", "main")
    commit(repo, BASE_CI, "drop the line")
    outputs = [f"{fmt}=r.{fmt}" for fmt in ("json", "sarif", "html", "markdown", "codequality")]
    assert main(["scan", ".", "--target", "18.0", "-q", "--diff-base", "main",
                 *[x for o in outputs for x in ("-o", o)]]) == 0
    for output in outputs:
        text = (repo / output.split("=")[1]).read_text(encoding="utf-8")
        assert token not in text and "Abcdefghij" not in text, output
    fixed = json.loads((repo / "r.json").read_text(encoding="utf-8"))["diff"]["fixed"]
    assert [(f["rule_id"], f["line"], f["snippet"]) for f in fixed] == [
        ("ci-job-jwt-variables", 5, "  script: [vault login $CI_JOB_JWT ****]")]
    capsys.readouterr()
    assert main(["scan", ".", "--target", "18.0", "--diff-base", "main", "--statistics"]) == 0
    assert token not in capsys.readouterr().out
