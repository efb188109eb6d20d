"""Every policy against its fixtures: the findings in a fixture folder are exactly those written in it.

A fixture line `# expect: <policy-id> col=<N>` says the next code line holds one finding of that
policy at column N; `# ok: <policy-id>` marks a look-alike on the next line that must not be found.
JavaScript and TypeScript fixtures write the same lines with `//`, XML and HTML ones inside `<!-- … -->`.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from scanner.rules.catalog import builtin_policy_dir, load_policies
from scanner.rules.policy import Policy

from conftest import run_scan, where

FIXTURES = Path(__file__).parent / "policies"
EXPECT = re.compile(r"^\s*(?:#|//|<!--)\s*expect:\s*(?P<id>[a-z0-9-]+)\s+col=(?P<col>\d+)\s*(?:-->)?\s*$")
OK = re.compile(r"^\s*(?:#|//|<!--)\s*ok:\s*(?P<id>[a-z0-9-]+)\s*(?:-->)?\s*$")
MARKER = re.compile(r"^\s*(?:#|//|<!--)\s*(expect|ok):")  # `<!-- … -->` in XML and HTML fixtures


def expectations(folder: Path) -> tuple[set[tuple[str, str, int, int]], set[str]]:
    expected: set[tuple[str, str, int, int]] = set()
    ok: set[str] = set()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = path.relative_to(folder).as_posix()
        pending: list[tuple[str, int]] = []
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if m := EXPECT.match(line):
                pending.append((m["id"], int(m["col"])))
            elif m := OK.match(line):
                ok.add(m["id"])
            elif MARKER.match(line):
                raise AssertionError(f"{rel}:{number}: malformed expectation {line.strip()!r}")
            elif pending:
                expected.update((pid, rel, number, col) for pid, col in pending)
                pending = []
        assert not pending, f"{rel}: expectation at end of file with no line after it"
    return expected, ok


FOLDERS = sorted(p for p in FIXTURES.glob("*/*") if p.is_dir())


@pytest.mark.parametrize("folder", FOLDERS, ids=[f"{p.parent.name}/{p.name}" for p in FOLDERS])
def test_fixture(folder: Path, policies: list[Policy]) -> None:
    expected, _ = expectations(folder)
    report = run_scan([folder], policies)
    assert not report.errors, report.errors
    assert where(report) == expected


def test_every_policy_has_fail_and_pass_fixtures() -> None:
    policies = load_policies([builtin_policy_dir()])
    ids = {p.id for p in policies}
    problems = []
    for pid in sorted(ids):
        fail, passing = FIXTURES / pid / "fail", FIXTURES / pid / "pass"
        if not fail.is_dir() or pid not in {e[0] for e in expectations(fail)[0]}:
            problems.append(f"{pid}: no fail fixture with `# expect: {pid}`")
        if not passing.is_dir() or pid not in expectations(passing)[1]:
            problems.append(f"{pid}: no pass fixture with `# ok: {pid}`")
    for folder in FIXTURES.iterdir():
        if folder.is_dir() and folder.name not in ids:
            problems.append(f"{folder.name}: fixture folder names no policy")
    for folder in FOLDERS:
        expected, ok = expectations(folder)
        for pid in {e[0] for e in expected} | ok:
            if pid not in ids:
                problems.append(f"{folder}: expectation names unknown policy {pid}")
    assert problems == []
