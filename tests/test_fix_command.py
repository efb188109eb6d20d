"""`sunset fix` as a command: a bad `fix:` block is a policy error, --diff writes nothing, invalid
results are refused, files are replaced atomically (mode, BOM and symlinks kept), overlapping fixes
converge over runs, suppressed findings are left alone, and `sunset scan` does not load the fixer."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scanner.cli import main
from scanner.fix import apply
from scanner.fix.apply import ChangedOnDisk, write_atomic
from scanner.rules.catalog import PolicyLoadError, load_policies

from conftest import ROOT


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


POLICY = """\
title: "A legacy key for tests"
summary: s
message: "`{match}` is legacy"
rationale: r
remediation: r
breaking: false
origin: gitlab
references: [{title: t, url: "https://example.com"}]
applies_to: [gitlab-ci]
match: {kind: jsonpath, path: "$.*.legacy_key"}
example: {before: a, after: b}
"""


@pytest.mark.parametrize(
    ("fix_block", "problem"),
    [
        ("fix: {kind: frobnicate, tier: safe}\n", "fix.0: Input tag 'frobnicate'"),
        ("fix: {kind: rename, tier: sure, names: {a: b}}\n", "fix.0.rename.tier: Input should be 'safe' or 'unsafe'"),
        ("fix:\n  kind: rename\n  tier: safe\n  names: {}\n", "fix.0.rename.names: Dictionary should have at least 1"),
        ("fix: {kind: delete, tier: safe, colour: red}\n", "fix.0.delete.colour: Extra inputs are not permitted"),
    ],
)
def test_a_bad_fix_block_is_a_policy_error(tmp_path: Path, fix_block: str, problem: str) -> None:
    (tmp_path / "legacy-key.yaml").write_text(POLICY + fix_block, encoding="utf-8")
    with pytest.raises(PolicyLoadError) as err:
        load_policies([tmp_path])
    assert f"legacy-key.yaml:12: {problem}" in str(err.value)


JOB = "job:\n  script: echo hi   # keep this comment\n  legacy_key: 1\n  other: 2\n"


def policies_dir(tmp_path: Path, **fixes: str | tuple[str, str]) -> Path:
    """A policy directory: one policy per keyword (its id ← the name, dashed), matching `$.*.legacy_key`
    or, given as (path, fix), that JSONPath; and a configuration selecting only these policies."""
    folder = tmp_path / "policies"
    folder.mkdir(exist_ok=True)
    ids = []
    for name, spec in fixes.items():
        path, block = spec if isinstance(spec, tuple) else ("$.*.legacy_key", spec)
        ids.append(name.replace("_", "-"))
        (folder / f"{ids[-1]}.yaml").write_text(POLICY.replace("$.*.legacy_key", path) + block, encoding="utf-8")
    (tmp_path / "only.yml").write_text(f"policies:\n  select: [{', '.join(ids)}]\n", encoding="utf-8")
    return folder


def run_fix(tmp_path: Path, target: Path, *flags: str) -> int:
    policies, config = str(tmp_path / "policies"), str(tmp_path / "only.yml")
    return main(["fix", str(target), "--policies", policies, "--config", config, *flags])


def test_diff_prints_a_patch_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    work = tmp_path / "samples"
    shutil.copytree(ROOT / "samples", work)
    untouched = tree(work)
    assert main(["fix", "--diff", str(work)]) == 1  # a non-empty diff, as `ruff --diff` and `git diff --exit-code`
    out = capsys.readouterr()
    assert tree(work) == untouched
    assert "--- a/deploy/helm/gitlab-agent/values.yaml\n+++ b/deploy/helm/gitlab-agent/values.yaml\n" in out.out
    assert "-  caCert: |\n+  kasCaCert: |\n" in out.out
    assert "-            - --ca-cert-file=/etc/agent/ca/ca.crt\n" in out.out
    assert "+  runners(paused: false, first: 100, after: $after) {\n" in out.out
    assert "would fix [agent-ca-cert-file] `caCert` → `kasCaCert`" in out.err
    assert "unsafe, not applied [mail-sidekiq-delivery-method]" in out.err
    if shutil.which("git"):  # the patch applies and gives what a real run writes
        patch = tmp_path / "fix.patch"
        patch.write_text(out.out, encoding="utf-8")
        subprocess.run(["git", "apply", str(patch)], cwd=work, check=True)
        fixed = tmp_path / "fixed"
        shutil.copytree(ROOT / "samples", fixed)
        assert main(["fix", str(fixed)]) == 0
        assert tree(work) == tree(fixed)


def test_a_fix_that_breaks_the_yaml_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    policies_dir(tmp_path, legacy_key="fix: {kind: rename, tier: safe, names: {legacy_key: 'bad: [key'}}\n")
    ci = tmp_path / "repo" / ".gitlab-ci.yml"
    ci.parent.mkdir()
    ci.write_text(JOB, encoding="utf-8")
    assert run_fix(tmp_path, ci.parent) == 1
    assert ci.read_text(encoding="utf-8") == JOB
    assert ".gitlab-ci.yml:3:3: refused [legacy-key] the result does not parse" in capsys.readouterr().out


def test_a_fix_that_changes_more_than_intended_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    block = 'fix: {kind: rename, tier: safe, names: {legacy_key: "new_key: 0\\n  extra"}}\n'
    policies_dir(tmp_path, legacy_key=block)
    ci = tmp_path / "repo" / ".gitlab-ci.yml"
    ci.parent.mkdir()
    ci.write_text(JOB, encoding="utf-8")
    assert run_fix(tmp_path, ci.parent) == 1
    assert ci.read_text(encoding="utf-8") == JOB
    assert "refused [legacy-key] the parsed data changed in a way the fix does not intend" in capsys.readouterr().out


def test_a_fix_that_breaks_the_toml_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    toml_policy = POLICY.replace("[gitlab-ci]", "[runner-config]").replace("$.*.legacy_key", "$.runners[*].legacy_key")
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "legacy-key.yaml").write_text(
        toml_policy + "fix: {kind: rename, tier: safe, names: {legacy_key: 'two words'}}\n", encoding="utf-8"
    )
    (tmp_path / "only.yml").write_text("policies:\n  select: [legacy-key]\n", encoding="utf-8")
    config = tmp_path / "repo" / "config.toml"
    config.parent.mkdir()
    text = '[[runners]]\n  name = "r"\n  legacy_key = 1\n'
    config.write_text(text, encoding="utf-8")
    assert run_fix(tmp_path, config.parent) == 1
    assert config.read_text(encoding="utf-8") == text
    assert "config.toml:3:3: refused [legacy-key]" in capsys.readouterr().out


def test_one_refused_fix_does_not_hold_back_the_others(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    policies_dir(
        tmp_path,
        legacy_key="fix: {kind: rename, tier: safe, names: {legacy_key: 'bad: [key'}}\n",
        other_key=("$.*.other", "fix: {kind: delete, tier: safe}\n"),
    )
    ci = tmp_path / "repo" / ".gitlab-ci.yml"
    ci.parent.mkdir()
    ci.write_text(JOB, encoding="utf-8")
    assert run_fix(tmp_path, ci.parent) == 1
    assert ci.read_text(encoding="utf-8") == JOB.replace("  other: 2\n", "")
    out = capsys.readouterr().out
    assert "refused [legacy-key]" in out and "fixed [other-key] deleted `other`" in out


def test_overlapping_fixes_apply_one_and_converge(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    policies_dir(
        tmp_path,
        legacy_key="fix: {kind: rename, tier: safe, names: {legacy_key: modern_key}}\n",
        legacy_key_gone="fix: {kind: delete, tier: safe}\n",
    )
    ci = tmp_path / "repo" / ".gitlab-ci.yml"
    ci.parent.mkdir()
    ci.write_text(JOB, encoding="utf-8")
    assert run_fix(tmp_path, ci.parent) == 1
    out = capsys.readouterr().out
    assert "not fixed [legacy-key] overlaps another fix in this file; run `sunset fix` again" in out
    assert ci.read_text(encoding="utf-8") == JOB.replace("  legacy_key: 1\n", "")  # the delete starts first
    assert run_fix(tmp_path, ci.parent) == 0
    assert ci.read_text(encoding="utf-8") == JOB.replace("  legacy_key: 1\n", "")
    assert "fixed 0 finding(s)" in capsys.readouterr().out


def test_writes_are_atomic_and_keep_mode_bom_and_symlinks(tmp_path: Path) -> None:
    policies_dir(tmp_path, legacy_key="fix: {kind: rename, tier: safe, names: {legacy_key: modern_key}}\n")
    repo = tmp_path / "repo"
    (repo / "ci").mkdir(parents=True)
    real = repo / "ci" / "jobs.yml"
    real.write_bytes(b"\xef\xbb\xbf" + JOB.replace("\n", "\r\n").encode())
    real.chmod(0o640)
    (repo / ".gitlab-ci.yml").symlink_to("ci/jobs.yml")
    assert run_fix(tmp_path, repo) == 0
    assert (repo / ".gitlab-ci.yml").is_symlink()
    assert real.read_bytes() == b"\xef\xbb\xbf" + JOB.replace("legacy_key", "modern_key").replace("\n", "\r\n").encode()
    assert real.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in (repo / "ci").iterdir()) == ["jobs.yml"]


def test_a_failed_write_leaves_the_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    policies_dir(tmp_path, legacy_key="fix: {kind: rename, tier: safe, names: {legacy_key: modern_key}}\n")
    ci = tmp_path / "repo" / ".gitlab-ci.yml"
    ci.parent.mkdir()
    ci.write_text(JOB, encoding="utf-8")

    def refuse(src: str, dst: str) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(apply.os, "replace", refuse)
    assert run_fix(tmp_path, ci.parent) == 1
    assert ci.read_text(encoding="utf-8") == JOB
    assert [p.name for p in ci.parent.iterdir()] == [".gitlab-ci.yml"]
    assert "not written [legacy-key] cannot write the file: [Errno 13] Permission denied" in capsys.readouterr().out


def test_a_file_changed_since_the_scan_is_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "a.yml"
    path.write_text("a: 2\n", encoding="utf-8")
    with pytest.raises(ChangedOnDisk):
        write_atomic(path, "a: 1\n", "b: 1\n")
    assert path.read_text(encoding="utf-8") == "a: 2\n"


def test_suppressed_and_unsafe_findings_are_left_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    values = tmp_path / "values.yaml"
    text = "config:\n  # sunset: ignore[agent-ca-cert-file] the chart is pinned to 1.x\n  caCert: x\n"
    values.write_text(text, encoding="utf-8")
    gitlab_rb = tmp_path / "gitlab.rb"
    gitlab_rb.write_text("gitlab_rails['incoming_email_delivery_method'] = 'sidekiq'\n", encoding="utf-8")
    assert main(["fix", str(tmp_path)]) == 0
    assert values.read_text(encoding="utf-8") == text
    assert "sidekiq" in gitlab_rb.read_text(encoding="utf-8")
    out = capsys.readouterr().out
    assert "gitlab.rb:1:14: unsafe, not applied [mail-sidekiq-delivery-method] `sidekiq` → `webhook`" in out
    assert "agent-ca-cert-file" not in out


def test_what_a_fix_cannot_do_is_said(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / ".gitlab-ci.yml").write_text(
        "audit:\n  script:\n"
        "    - curl -s \"$CI_API_V4_URL/runners/all\" | jq '.[] | select(.active) | .id'\n"
        '    - curl -s --form "active=$WANTED" --request PUT "$CI_API_V4_URL/runners/4"\n',
        encoding="utf-8",
    )
    assert main(["fix", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.count("not fixed [rest-runner-active] no value (`false`, `true`, `False`, `True`) is assigned") == 2
    assert "sunset fix: fixed 0 finding(s) in 0 file(s); 2 left to you;" in out


def test_scan_does_not_load_the_fixer(tmp_path: Path) -> None:
    (tmp_path / ".gitlab-ci.yml").write_text("job:\n  script: [echo]\n")
    code = (
        "import sys, scanner.cli as c; c.main(['scan', sys.argv[1]]);"
        "print(sorted(m for m in sys.modules if m.startswith('scanner.fix.')))"
    )
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines()[-1] == "[]"
