"""Issue 27, the work per line and per file is bounded: at most `MAX_PER_LINE` findings on one line
and `MAX_PER_FILE` in one file are reported, with one warning saying how many more were left out.
Each crafted input of the issue (near the default 2 MiB file limit) runs in a subprocess that
reports its own CPU time and peak memory; the budget — 15 s of CPU, 500 MB — catches a blow-up (the
issue measured 3.6–6.0 GB and minutes on these), it measures no speed: the costliest input, the
1.5 MB Dockerfile `RUN` line, takes 2.9–4.1 s alone and took 5.4 s on a loaded machine. CPU time,
not wall time: a neighbour's load stretches wall time far more than the work done.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scanner.engine.findings import MAX_PER_FILE, MAX_PER_LINE

from conftest import sunset

ROOT = Path(__file__).resolve().parent.parent
CPU_BUDGET_S = 15.0
RSS_BUDGET_KB = 500 * 1024
SIZE = 1_500_000  # bytes of each crafted file (the default limit is 2 MiB)

# Peak memory from /proc (VmHWM: this process image's own); `ru_maxrss` would start from the
# parent's peak, which Linux carries across fork and exec.
CHILD = """\
import json, re, resource, sys
from pathlib import Path
from scanner.cli import main
code = main(sys.argv[1:])
usage = resource.getrusage(resource.RUSAGE_SELF)
peak = int(re.search(r"VmHWM:\\s*(\\d+) kB", Path("/proc/self/status").read_text()).group(1))
print(json.dumps({"code": code, "cpu": usage.ru_utime + usage.ru_stime, "rss_kb": peak}), file=sys.stderr)
"""


def _measured(path: Path, report: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    done = subprocess.run([sys.executable, "-c", CHILD, "scan", str(path), "--format", "json", "--fail-on", "never",
                           "--output", str(report)], capture_output=True, text=True, timeout=120, cwd=path.parent,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    usage: dict[str, Any] = json.loads(done.stderr.splitlines()[-1])
    return usage, json.loads(report.read_text(encoding="utf-8"))


def _times(unit: str, fixed: int = 0) -> int:
    return (SIZE - fixed) // len(unit)


REGISTER = "gitlab-runner register -r $T && "
ARGS = "--registration-token x "
BUILD_REF = "$CI_BUILD_REF"
JWKS = "https://gitlab.example.com/-/jwks "
JWKS_LINE = "curl https://gitlab.example.com/-/jwks\n"
JWT = "$CI_JOB_JWT "


# name: (file name, text, the reported (policy, line, column) of one line's findings, the line's
# findings made, the lines made)
Case = tuple[str, str, Callable[[int], tuple[str, int, int]], int, int]
CASES: dict[str, Case] = {
    "register-run in a Dockerfile": (
        "Dockerfile", "FROM alpine\nRUN " + REGISTER * _times(REGISTER) + "true\n",
        lambda i: ("runner-registration-token", 2, 28 + i * len(REGISTER)), _times(REGISTER), 1),
    "register-args-run in CI": (
        ".gitlab-ci.yml", "job:\n  script:\n    - gitlab-runner register " + ARGS * _times(ARGS) + "\n",
        lambda i: ("runner-registration-token", 3, 30 + i * len(ARGS)), _times(ARGS), 1),
    "variable-ref-run in CI": (
        ".gitlab-ci.yml", "job:\n  script:\n    - echo " + BUILD_REF * _times(BUILD_REF) + "\n",
        lambda i: ("ci-build-variables", 3, 12 + i * len(BUILD_REF)), _times(BUILD_REF), 1),
    "jwks in shell, one line": (
        "x.sh", "curl " + JWKS * _times(JWKS) + "\n",
        lambda i: ("jwks-instance-endpoint", 1, 32 + i * len(JWKS)), _times(JWKS), 1),
    "a 96 KB line of 8,000 $CI_JOB_JWT": (
        ".gitlab-ci.yml", "job:\n  script: [echo " + JWT * 8_000 + "]\n",
        lambda i: ("ci-job-jwt-variables", 2, 17 + i * len(JWT)), 8_000, 1),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_one_long_line(tmp_path: Path, name: str) -> None:
    file_name, text, place, made, _ = CASES[name]
    (tmp_path / file_name).write_text(text, encoding="utf-8")
    usage, report = _measured(tmp_path / file_name, tmp_path / "report.json")
    assert usage["cpu"] < CPU_BUDGET_S and usage["rss_kb"] < RSS_BUDGET_KB, usage
    found = [(f["rule_id"], f["path"], f["line"], f["column"]) for f in report["findings"]]
    assert found == [(p, file_name, line, col) for p, line, col in map(place, range(MAX_PER_LINE))]
    assert [(w["path"], w["line"], w["message"]) for w in report["warnings"]] == [
        (file_name, place(0)[1], f"{made - MAX_PER_LINE:,} more findings in this file not reported: at most "
                                f"{MAX_PER_LINE} on one line and {MAX_PER_FILE:,} in one file are (the first left "
                                "out is on this line)")]
    assert report["errors"] == []


@pytest.mark.slow
def test_a_finding_line_repeated_50000_times(tmp_path: Path) -> None:
    """Linear, and the report bounded: the first `MAX_PER_FILE` lines are reported, one warning
    counts the rest and names the first line left out."""
    lines = 50_000
    (tmp_path / "x.sh").write_text(JWKS_LINE * lines, encoding="utf-8")
    usage, report = _measured(tmp_path / "x.sh", tmp_path / "report.json")
    assert usage["cpu"] < CPU_BUDGET_S and usage["rss_kb"] < RSS_BUDGET_KB, usage
    found = [(f["rule_id"], f["path"], f["line"], f["column"]) for f in report["findings"]]
    assert found == [("jwks-instance-endpoint", "x.sh", n, 32) for n in range(1, MAX_PER_FILE + 1)]
    assert [(w["path"], w["line"], w["message"]) for w in report["warnings"]] == [
        ("x.sh", MAX_PER_FILE + 1, f"{lines - MAX_PER_FILE:,} more findings in this file not reported: at most "
                                   f"{MAX_PER_LINE} on one line and {MAX_PER_FILE:,} in one file are (the first "
                                   "left out is on this line)")]


def test_under_the_limits_nothing_is_left_out(tmp_path: Path) -> None:
    """The limits are limits: a line of exactly `MAX_PER_LINE` findings is reported whole, no warning."""
    (tmp_path / "x.sh").write_text("curl " + JWKS * MAX_PER_LINE + "\n" + JWKS_LINE, encoding="utf-8")
    _, report = _measured(tmp_path / "x.sh", tmp_path / "report.json")
    found = [(f["line"], f["column"]) for f in report["findings"]]
    assert found == [(1, 32 + i * len(JWKS)) for i in range(MAX_PER_LINE)] + [(2, 32)]
    assert report["warnings"] == []


def test_the_text_report_shows_the_warning(tmp_path: Path) -> None:
    (tmp_path / "x.sh").write_text("curl " + JWKS * (MAX_PER_LINE + 3) + "\n", encoding="utf-8")
    done = sunset("scan", "x.sh", "--color", "never", cwd=tmp_path)
    assert done.returncode == 1
    assert (f"3 more findings in this file not reported: at most {MAX_PER_LINE} on one line and "
            f"{MAX_PER_FILE:,} in one file are (the first left out is on this line)") in done.stdout
