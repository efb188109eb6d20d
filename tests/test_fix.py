"""Every policy's automatic fix against its fixture pair: `tests/fixes/<policy-id>/before/` is fixed
into a copy and compared byte for byte with `after/`; a second run changes nothing, and a scan of
the result no longer reports the policy. A meta-test keeps fixtures and `fix:` blocks in step.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from scanner.cli import main
from scanner.report import policydocs as docs
from scanner.rules.policy import Policy

from conftest import run_scan

FIXES = Path(__file__).parent / "fixes"
CASES = sorted(p.name for p in FIXES.iterdir() if p.is_dir())


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def fix(work: Path, config: Path, *flags: str) -> int:
    return main(["fix", str(work), "--config", str(config), *flags])


@pytest.mark.parametrize("policy_id", CASES)
def test_fix_turns_before_into_after(
    policy_id: str, policies: list[Policy], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = next(p for p in policies if p.id == policy_id)
    before, after = FIXES / policy_id / "before", FIXES / policy_id / "after"
    work = tmp_path / "repo"
    shutil.copytree(before, work)
    config = tmp_path / "sunset.yml"
    config.write_text(f"policies:\n  select: [{policy_id}]\n", encoding="utf-8")
    unsafe = any(f.tier == "unsafe" for f in policy.fixes)
    if unsafe:
        assert fix(work, config) == 0
        assert tree(work) == tree(before), "an unsafe fix was applied without --unsafe"
    flags = ["--unsafe"] if unsafe else []

    assert fix(work, config, *flags) == 0, capsys.readouterr().out
    assert tree(work) == tree(after)
    assert fix(work, config, *flags) == 0
    assert tree(work) == tree(after), "a second run changed the files again"
    report = run_scan([work], [policy])
    assert [f.location.path for f in report.findings] == []
    assert not report.errors


def test_every_fixable_policy_has_a_fixture_pair(policies: list[Policy]) -> None:
    fixable = {p.id for p in policies if p.fixes}
    assert set(CASES) == fixable
    for case in CASES:
        before, after = tree(FIXES / case / "before"), tree(FIXES / case / "after")
        assert before and set(before) == set(after), f"{case}: before/ and after/ must mirror each other"
        assert before != after, f"{case}: the fixture fixes nothing"


def test_policy_pages_show_the_fix_and_its_tier(policies: list[Policy]) -> None:
    by_id = {p.id: p for p in policies}
    safe = docs.policy_page(by_id["agent-ca-cert-file"])
    assert "| Automatic fix | safe |" in safe
    assert "## Automatic fix\n\n`rename` fix, **safe**" in safe
    assert "- `caCert` → `kasCaCert`" in safe
    unsafe = docs.policy_page(by_id["mail-sidekiq-delivery-method"])
    assert "**unsafe**" in unsafe and "- value `sidekiq` → `webhook`" in unsafe
    none = docs.policy_page(by_id["ci-job-jwt-variables"])
    assert "| Automatic fix | none |" in none and "None: `sunset fix` leaves this finding to you" in none
    assert "| safe |" in docs.index_markdown(list(policies))


def test_docs_fix_lists_every_policy_in_the_right_table(policies: list[Policy]) -> None:
    text = (Path(__file__).parent.parent / "docs" / "fix.md").read_text(encoding="utf-8")
    with_fix, without = text.split("## Policies with an automatic fix", 1)[1].split("## Policies without", 1)
    listed = {
        section: re.findall(r"(?m)^\| ([a-z0-9-]+) \| (safe|unsafe|[^|]+) \|", part)
        for section, part in (("with", with_fix), ("without", without))
    }
    assert {(p.id, next(iter({f.tier for f in p.fixes}))) for p in policies if p.fixes} == {
        (pid, tier) for pid, tier in listed["with"]
    }
    assert sorted(p.id for p in policies if not p.fixes) == sorted(pid for pid, _ in listed["without"])
