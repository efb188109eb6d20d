"""Benchmark `sunset scan` against checkov's gitlab_ci framework and a YAML parse floor.

Run by hand (see bench/README.md); never part of the test suite. One run builds N
pipeline roots (``roots/repo-0000/.gitlab-ci.yml`` ...) from the shared corpus in a
temporary directory, then times on those same bytes, best of ``--repeat`` runs:

* checkov ``--framework gitlab_ci`` (its own virtualenv, offline settings),
* the parse floor: ruamel.yaml's C composer over every file, in-process,
* ``sunset scan <dir> --format json --fail-on never``,
* sunset's start-up: ``sunset scan <one small file>``.

It prints machine facts, a Markdown table and the ratios, plus what each tool
really read, so the comparison is honest. A missing tool is skipped, not fatal.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

from bench_lib import (
    REPO_ROOT,
    Corpus,
    Measurement,
    ToolFailed,
    build_corpus,
    load_average,
    machine_info,
    progress,
    run_timed,
    tool_version,
)
from checkov_side import DEFAULT_CHECKOV, checkov_version, measure_checkov
from report import print_report, write_json

TOOLS = ("checkov", "floor", "sunset", "startup")
SUNSET_FLAGS = ("--format", "json", "--fail-on", "never")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--corpus",
        type=Path,
        default=REPO_ROOT.parent / "shared/corpus/ci",
        help="directory of .gitlab-ci.yml files (default: ../shared/corpus/ci)",
    )
    parser.add_argument("--roots", type=int, default=1000, help="pipeline roots to build")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement; best is kept")
    parser.add_argument("--startup-repeat", type=int, default=5, help="runs for the start-up time")
    parser.add_argument(
        "--checkov",
        type=Path,
        default=DEFAULT_CHECKOV,
        help="checkov executable (default: bench/.venv-checkov/bin/checkov)",
    )
    parser.add_argument(
        "--sunset",
        type=str,
        default=None,
        help="sunset executable (default: .venv/bin/sunset, else sunset on PATH)",
    )
    parser.add_argument(
        "--skip",
        action="append",
        choices=TOOLS,
        default=[],
        help="leave a measurement out (repeatable)",
    )
    parser.add_argument(
        "--json",
        type=Path,
        default=None,
        metavar="OUT",
        help="also write the results as JSON to OUT",
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    return parser.parse_args(argv)


def resolve_sunset(arg: str | None) -> Path | None:
    """The sunset console script: --sunset, else the project venv, else PATH."""
    candidates = [arg] if arg else [str(REPO_ROOT / ".venv/bin/sunset"), "sunset"]
    for candidate in candidates:
        if Path(candidate).is_file():
            return Path(candidate)
        found = shutil.which(candidate)
        if found:
            return Path(found)
    return None


def measure_floor(corpus: Corpus, repeat: int) -> Measurement:
    """Read + compose every file with ruamel.yaml's C composer, in this process."""
    measurement = Measurement("parse floor (ruamel C compose)")
    try:
        from ruamel.yaml import YAML
        from ruamel.yaml.error import YAMLError
    except ImportError:
        measurement.skipped = "ruamel.yaml not importable here: pip install -r bench/requirements.txt"
        return measurement
    yaml = YAML(typ="safe", pure=False)
    if "CParser" not in getattr(yaml.Parser, "__name__", ""):
        measurement.notes.append("WARNING: ruamel.yaml.clib missing, pure-Python parser measured")
    failed: dict[Path, str] = {}
    for _ in range(repeat):
        failed = {}
        start = time.perf_counter()
        for path in corpus.files:
            try:
                for _node in yaml.compose_all(path.read_bytes().decode("utf-8")):
                    pass
            except (YAMLError, UnicodeDecodeError) as exc:
                failed[path] = yaml_reason(exc)
        measurement.runs.append(time.perf_counter() - start)
    measurement.notes.extend(rejection_notes("ruamel C composer", corpus, failed))
    return measurement


def yaml_reason(exc: Exception) -> str:
    """``problem (line L, column C)`` from a ruamel.yaml error, else its first line."""
    problem, mark = getattr(exc, "problem", None), getattr(exc, "problem_mark", None)
    if problem and mark is not None:
        return f"{problem} (line {mark.line + 1}, column {mark.column + 1})"
    return str(exc).strip().splitlines()[0]


def rejection_notes(who: str, corpus: Corpus, failed: dict[Path, str]) -> list[str]:
    """Describe which corpus files (and how many roots) a parser rejected, and why."""
    if not failed:
        return [f"{who}: composed all {len(corpus.files)} files"]
    reasons = {corpus.source_of[path].name: reason for path, reason in failed.items()}
    summary = (
        f"{who}: rejected {len(failed)}/{len(corpus.files)} files "
        f"({len(reasons)} unique corpus file(s); their time is still counted)"
    )
    notes = [summary]
    notes.extend(f"  rejected: {name}: {reason}" for name, reason in sorted(reasons.items()))
    return notes


def measure_sunset(exe: Path | None, corpus: Corpus, work: Path, repeat: int) -> Measurement:
    """Time `sunset scan <roots> --format json --fail-on never`."""
    measurement = Measurement("sunset")
    if exe is None:
        measurement.skipped = "sunset not found (.venv/bin/sunset or PATH); pass --sunset"
        return measurement
    out = work / "sunset.json"
    cmd = [str(exe), "scan", str(corpus.roots_dir), *SUNSET_FLAGS]
    try:
        # Exit 1 is accepted when the JSON report is valid: sunset reports per-file errors
        # (e.g. a local include missing from these one-file roots) through its exit status.
        measurement.runs = [run_timed(cmd, out=out, ok={0, 1}) for _ in range(repeat)]
        measurement.notes.extend(describe_sunset_output(out, len(corpus.files)))
    except ToolFailed as exc:
        measurement.runs = []
        measurement.skipped = str(exc)
    return measurement


def describe_sunset_output(out: Path, expected_files: int) -> list[str]:
    """Facts from sunset's JSON report; raise ToolFailed if it is not a report."""
    try:
        data = json.loads(out.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ToolFailed(f"sunset output is not JSON ({exc}); see {out}") from exc
    if not isinstance(data, dict):
        raise ToolFailed(f"sunset JSON is a {type(data).__name__}, not a report object")
    summary = data.get("summary") or {}
    scanned = summary.get("files_scanned")
    verdict = "" if scanned == expected_files else f" (WARNING: expected {expected_files})"
    return [
        f"summary: files_scanned={scanned}{verdict}, findings={summary.get('findings')}, "
        f"errors={summary.get('errors')}, suppressed={summary.get('suppressed')}"
    ]


def measure_startup(exe: Path | None, corpus: Corpus, work: Path, repeat: int) -> Measurement:
    """Time `sunset scan <smallest file>`: mostly interpreter and import cost."""
    measurement = Measurement("sunset start-up (1 small file)")
    if exe is None:
        measurement.skipped = "sunset not found"
        return measurement
    smallest = min(corpus.files, key=lambda path: path.stat().st_size)
    cmd = [str(exe), "scan", str(smallest), *SUNSET_FLAGS]
    try:
        measurement.runs = [run_timed(cmd, out=work / "startup.json", ok={0, 1}) for _ in range(repeat)]
    except ToolFailed as exc:
        measurement.skipped = str(exc)
    measurement.notes.append(f"file: {smallest.stat().st_size} bytes ({corpus.source_of[smallest].name})")
    return measurement


def tool_versions(checkov: Path, sunset: Path | None) -> dict[str, str]:
    sunset_version = tool_version([str(sunset), "--version"]) if sunset else "not found"
    return {"checkov": checkov_version(checkov), "sunset": sunset_version}


def run_all(args: argparse.Namespace, corpus: Corpus, work: Path) -> list[Measurement]:
    sunset = resolve_sunset(args.sunset)
    results: list[Measurement] = []
    if "checkov" not in args.skip:
        progress(f"checkov: {args.repeat} run(s)")
        results.append(measure_checkov(args.checkov, corpus, work, args.repeat))
    if "floor" not in args.skip:
        progress(f"parse floor: {args.repeat} run(s)")
        results.append(measure_floor(corpus, args.repeat))
    if "sunset" not in args.skip:
        progress(f"sunset: {args.repeat} run(s)")
        results.append(measure_sunset(sunset, corpus, work, args.repeat))
    if "startup" not in args.skip:
        progress(f"sunset start-up: {args.startup_repeat} run(s)")
        results.append(measure_startup(sunset, corpus, work, args.startup_repeat))
    return results


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    load_before = load_average()
    work = Path(tempfile.mkdtemp(prefix="sunset-bench-"))
    try:
        corpus = build_corpus(args.corpus.resolve(), work / "roots", args.roots)
        progress(corpus.describe())
        results = run_all(args, corpus, work)
        info = machine_info(tool_versions(args.checkov, resolve_sunset(args.sunset)), load_before)
        print_report(info, corpus, results, args.repeat)
        if args.json:
            write_json(args.json, info, corpus, results)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        if args.keep:
            progress(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
