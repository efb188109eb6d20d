"""checkov's side of the benchmark: offline invocation, timing, and proof of what it read.

checkov lives in its own virtualenv (bench/.venv-checkov, made by bench/setup.sh) so its
pinned dependencies never touch sunset's environment. Its gitlab_ci runner drops a file
it cannot load without counting a parsing error, so a bare summary overstates its work;
``verify`` therefore (1) asks checkov's own loader which corpus files it reads
(checkov_probe.py), and (2) checks that the timed run's check count equals the sum of
per-file counts from a run over the unique corpus files, i.e. every root was scanned.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from bench_lib import (
    Corpus,
    Measurement,
    ToolFailed,
    build_corpus,
    run_timed,
    tool_version,
)

BENCH_DIR = Path(__file__).resolve().parent
DEFAULT_CHECKOV = BENCH_DIR / ".venv-checkov" / "bin" / "checkov"
OFFLINE_ENV = {"BC_SKIP_MAPPING": "TRUE", "CHECKOV_RUN_SCA_PACKAGE_SCAN_V2": "false"}
API_KEY_VARS = ("BC_API_KEY", "PRISMA_API_URL", "CKV_API_KEY")


def checkov_env() -> dict[str, str]:
    """This environment minus any platform credentials, plus the offline switches."""
    env = {key: value for key, value in os.environ.items() if key not in API_KEY_VARS}
    env.update(OFFLINE_ENV)
    return env


def checkov_cmd(exe: Path, target: Path, *, quiet: bool = True) -> list[str]:
    cmd = [
        str(exe),
        "--framework",
        "gitlab_ci",
        "-d",
        str(target),
        "--compact",
        "-o",
        "json",
        "--skip-download",
    ]
    return [*cmd, "--quiet"] if quiet else cmd


def checkov_version(exe: Path) -> str:
    return tool_version([str(exe), "--version"], checkov_env()) if exe.exists() else "not installed"


def measure_checkov(exe: Path, corpus: Corpus, work: Path, repeat: int) -> Measurement:
    """Best-of-``repeat`` wall time of one checkov scan of all roots, then verification."""
    measurement = Measurement("checkov (gitlab_ci)")
    if not exe.exists():
        measurement.skipped = f"checkov not found at {exe}: run bench/setup.sh or pass --checkov"
        return measurement
    out = work / "checkov.json"
    cmd = checkov_cmd(exe, corpus.roots_dir)
    try:
        # Exit status 1 only means "some check failed".
        measurement.runs = [run_timed(cmd, out=out, ok={0, 1}, env=checkov_env(), cwd=work) for _ in range(repeat)]
        report = gitlab_report(out)
    except (ToolFailed, ValueError) as exc:
        measurement.runs = []
        measurement.skipped = str(exc)
        return measurement
    try:
        measurement.details = verify(exe, corpus, work, report)
        measurement.notes.extend(verification_notes(measurement.details, corpus))
    except (ToolFailed, ValueError, KeyError, OSError) as exc:
        measurement.notes.append(f"WARNING: could not verify what checkov read: {exc!r}")
    return measurement


def gitlab_report(out: Path) -> dict[str, Any]:
    """The gitlab_ci report out of checkov's JSON (a dict, or a list of per-framework dicts)."""
    data = json.loads(out.read_text(encoding="utf-8"))
    reports = data if isinstance(data, list) else [data]
    for report in reports:
        if isinstance(report, dict) and report.get("check_type") == "gitlab_ci":
            return report
    raise ToolFailed(f"no gitlab_ci report in checkov output {out}: checkov scanned nothing")


def checks_per_root(report: dict[str, Any]) -> dict[str, int]:
    """Passed + failed checks per scanned file (needs a run without --quiet)."""
    counts: dict[str, int] = {}
    for kind in ("passed_checks", "failed_checks"):
        for check in report.get("results", {}).get(kind, []):
            root = Path(check["file_path"]).parts[1]  # "/repo-0007/.gitlab-ci.yml"
            counts[root] = counts.get(root, 0) + 1
    return counts


def verify(exe: Path, corpus: Corpus, work: Path, timed: dict[str, Any]) -> dict[str, Any]:
    """Facts about what checkov really read; see the module docstring."""
    unique = build_corpus(corpus.sources[0].parent, work / "unique", len(corpus.sources))
    out = work / "checkov-unique.json"
    run_timed(
        checkov_cmd(exe, unique.roots_dir, quiet=False),
        out=out,
        ok={0, 1},
        env=checkov_env(),
        cwd=work,
    )
    per_root = checks_per_root(gitlab_report(out))
    per_source = [per_root.get(path.parent.name, 0) for path in unique.files]
    summary = timed.get("summary", {})
    return {
        "summary": summary,
        "checks_evaluated": summary.get("passed", 0) + summary.get("failed", 0),
        "checks_expected": sum(per_source[i % len(per_source)] for i in range(len(corpus.files))),
        "sources_without_results": [
            unique.source_of[p].name for p, n in zip(unique.files, per_source, strict=True) if n == 0
        ],
        "probe": probe(exe, unique),
    }


def probe(exe: Path, unique: Corpus) -> list[dict[str, Any]]:
    """Run checkov_probe.py with checkov's interpreter; one record per corpus file."""
    python = exe.parent / "python"
    cmd = [str(python), str(BENCH_DIR / "checkov_probe.py"), *map(str, unique.files)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, check=True, env=checkov_env())
    except (OSError, subprocess.CalledProcessError) as exc:
        return [{"error": f"probe failed: {exc}"}]
    records: list[dict[str, Any]] = json.loads(proc.stdout)
    for record in records:
        record["source"] = unique.source_of[Path(record.pop("path"))].name
    return records


def verification_notes(details: dict[str, Any], corpus: Corpus) -> list[str]:
    """Human-readable lines proving (or disproving) what checkov's timed runs read."""
    summary = details["summary"]
    evaluated, expected = details["checks_evaluated"], details["checks_expected"]
    verdict = "every root was scanned" if evaluated == expected else "MISMATCH: check this"
    dropped = [r for r in details["probe"] if not r.get("parsed", True) or "source" not in r]
    dropped_names = {r.get("source") for r in dropped}
    dropped_roots = sum(corpus.source_of[path].name in dropped_names for path in corpus.files)
    notes = [
        (
            f"timed run's JSON: check_type=gitlab_ci, passed={summary.get('passed')}, "
            f"failed={summary.get('failed')}, parsing_errors={summary.get('parsing_errors')}"
        ),
        (
            f"checks evaluated {evaluated:,}; expected {expected:,} from a per-file run "
            f"over the {len(corpus.sources)} unique files ({verdict})"
        ),
        (
            f"checkov's YAML loader silently dropped {len(dropped)}/{len(corpus.sources)} "
            f"unique files = {dropped_roots}/{len(corpus.files)} roots "
            "(not counted in parsing_errors)"
        ),
    ]
    notes.extend(f"  dropped: {r.get('source')}: {r.get('error')}" for r in dropped)
    no_results = len(details["sources_without_results"])
    notes.append(f"unique files with no check result (dropped or nothing to check): {no_results}")
    return notes
