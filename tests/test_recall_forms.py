"""The forms of the recall measurement (docs/recall.md): every deprecated usage read in the real files
of the set is written again as a small case of our own under tests/recall/, and each case is
scanned as its user would scan it (`sunset scan .` in a checkout, or every file named).
tests/recall/cases.yaml says, per case, what is found today at its exact (policy, path, line,
column), what is missed today and why (xfail, strict: fixing it fails the test until the case is
moved to `found`), and which false positives are still reported (xfail, strict, likewise) or no longer are.

Nothing here reads the real files: those stay outside the checkout (bench/recall.py measures them).
"""

from __future__ import annotations

import contextlib
import csv
import json
import shutil
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from scanner.cli import main

ROOT = Path(__file__).resolve().parent.parent
CASES_DIR = Path(__file__).resolve().parent / "recall"
RECALL_DOCS = ROOT / "docs" / "recall"

Where = tuple[str, str, int, int]  # (policy, path, line, column)


@dataclass(frozen=True)
class Lines:
    """A usage sunset should report: a finding of `policy` (None: any policy) on `first`..`last`."""

    policy: str | None
    path: str
    first: int
    last: int
    why: str

    def matches(self, where: Where) -> bool:
        policy, path, line, _ = where
        return (self.policy is None or policy == self.policy) and path == self.path and self.first <= line <= self.last


@dataclass(frozen=True)
class Case:
    name: str
    folder: Path
    scan: str
    found: tuple[Where, ...]
    missed: tuple[Lines, ...]
    absent: tuple[tuple[Lines, bool], ...]  # and whether it is still reported (xfail)
    max_input_errors: int | None
    noisy: str | None


def _lines(item: dict[str, Any], why_key: str) -> Lines:
    first, last = item["lines"]
    return Lines(item["policy"], item["path"], int(first), int(last), str(item[why_key]))


def _absent(item: dict[str, Any]) -> tuple[Lines, bool]:
    """A false positive and whether sunset still reports it (`reported: why`; fixed: `why`)."""
    return _lines(item, "reported" if "reported" in item else "why"), "reported" in item


def _load_cases() -> dict[str, Case]:
    data = YAML(typ="safe").load((CASES_DIR / "cases.yaml").read_text(encoding="utf-8"))
    cases = {}
    for name, spec in data.items():
        cases[name] = Case(
            name=name,
            folder=CASES_DIR / spec.get("dir", name),
            scan=spec.get("scan", "folder"),
            found=tuple((str(p), str(path), int(line), int(col)) for p, path, line, col in spec.get("found", [])),
            missed=tuple(_lines(item, "why") for item in spec.get("missed", [])),
            absent=tuple(_absent(item) for item in spec.get("absent", [])),
            max_input_errors=spec.get("max_input_errors"),
            noisy=spec.get("noisy"),
        )
    return cases


CASES = _load_cases()


@cache
def _report(name: str) -> dict[str, Any]:
    """The JSON report of one case, scanned once per test process in a checkout of its own."""
    case = CASES[name]
    with tempfile.TemporaryDirectory(prefix="recall-") as tmp:
        checkout = Path(tmp, "checkout")
        shutil.copytree(case.folder, checkout)
        (checkout / ".git").mkdir()
        out = Path(tmp, "report.json")
        if case.scan == "folder":
            targets = ["."]
        else:
            targets = sorted(
                p.relative_to(checkout).as_posix()
                for p in checkout.rglob("*")
                if p.is_file() and ".git" not in p.relative_to(checkout).parts
            )
        with contextlib.chdir(checkout):
            status = main(["scan", *targets, "--format", "json", "--output", str(out), "--exit-zero", "--quiet"])
        assert status == 0, f"sunset could not scan case {name}"
        report: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
        return report


def _findings(name: str) -> set[Where]:
    return {(f["rule_id"], f["path"], f["line"], f["column"]) for f in _report(name)["findings"]}


def _params(kind: str) -> list[Any]:
    params = []
    for case in CASES.values():
        if kind == "found":
            params += [pytest.param(case.name, w, id=f"{case.name}:{w[0]}@{w[1]}:{w[2]}") for w in case.found]
        elif kind in ("missed", "absent"):
            items = [(item, True) for item in case.missed] if kind == "missed" else list(case.absent)
            for item, failing in items:
                ident = f"{case.name}:{item.policy or 'any'}@{item.path}:{item.first}"
                marks = [pytest.mark.xfail(strict=True, reason=f"{case.name}: {item.why}")] if failing else []
                params.append(pytest.param(case.name, item, id=ident, marks=marks))
        else:
            if case.max_input_errors is not None:
                marks = [pytest.mark.xfail(strict=True, reason=case.noisy)] if case.noisy else []
                params.append(pytest.param(case.name, case.max_input_errors, id=case.name, marks=marks))
    return params


@pytest.mark.parametrize(("name", "where"), _params("found"))
def test_found_today_at_its_exact_place(name: str, where: Where) -> None:
    assert where in _findings(name)


@pytest.mark.parametrize(("name", "usage"), _params("missed"))
def test_missed_today(name: str, usage: Lines) -> None:
    hits = [w for w in _findings(name) if usage.matches(w)]
    assert hits, f"no finding of {usage.policy or 'any policy'} on {usage.path}:{usage.first}-{usage.last}"


@pytest.mark.parametrize(("name", "usage"), _params("absent"))
def test_false_positive_not_reported(name: str, usage: Lines) -> None:
    hits = [w for w in _findings(name) if usage.matches(w)]
    assert not hits, f"reported: {hits}"


@pytest.mark.parametrize(("name", "limit"), _params("errors"))
def test_input_errors_within_limit(name: str, limit: int) -> None:
    errors = _report(name)["errors"]
    assert len(errors) <= limit, [f"{e['path']}:{e['line']}: {e['message']}" for e in errors]


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_finding_is_listed(name: str) -> None:
    """Nothing is reported beyond what the case lists: a new finding is either a false positive or a
    missed usage now found, and either way cases.yaml must say so."""
    case = CASES[name]
    reported = {w for w in _findings(name) if not any(item.matches(w) for item, _ in case.absent)}
    assert reported == set(case.found)


def _tsv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))


def test_every_usage_of_the_measurement_has_its_case() -> None:
    """Each row of docs/recall/expected.tsv (and each false positive of verdicts.tsv) names a case
    here, each case is named by one of them or reuses another's folder, and no folder is orphaned."""
    named = {row["case"] for row in _tsv(RECALL_DOCS / "expected.tsv")}
    named |= {row["case"] for row in _tsv(RECALL_DOCS / "verdicts.tsv")}
    assert named <= set(CASES), sorted(named - set(CASES))
    assert {n for n, c in CASES.items() if c.folder.name == n} <= named, sorted(set(CASES) - named)
    folders = {p.name for p in CASES_DIR.iterdir() if p.is_dir()}
    assert folders == {c.folder.name for c in CASES.values()}
