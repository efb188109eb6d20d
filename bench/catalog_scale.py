"""Does `sunset scan` time grow with the number of policies? The builtin catalog x1 against x3.

Run by hand (see bench/README.md); never part of the test suite. One run builds the same N
pipeline roots as bench/run.py, plus a synthetic policy directory holding the builtin catalog
copied twice more under new ids (`foo` becomes `foo-copy1` and `foo-copy2`; file stem = id,
nothing else rewritten). It then times, interleaved, best of ``--repeat`` runs:

* x1: ``sunset scan roots --format json --fail-on never``            (builtin policies only)
* x3: the same plus ``--policies EXTRA_DIR``                         (builtin + 2 copies)

and ``sunset scan <smallest corpus file>`` for the start-up figure. Every copied policy that
fires must give exactly the findings of its original, so x3 must report 3x the findings of x1;
the report prints both counts and checks it rule by rule.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from collections import Counter
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
from run import SUNSET_FLAGS, resolve_sunset

COPIES = 2
TARGET_RATIO = 1.2
TARGET_STARTUP = 0.15


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--corpus",
        type=Path,
        default=REPO_ROOT.parent / "shared/corpus/ci",
        help="directory of .gitlab-ci.yml files (default: ../shared/corpus/ci)",
    )
    parser.add_argument("--roots", type=int, default=1000, help="pipeline roots to build")
    parser.add_argument("--repeat", type=int, default=5, help="runs per catalog size; best is kept")
    parser.add_argument("--startup-repeat", type=int, default=10, help="runs for the start-up time")
    parser.add_argument("--policies", type=Path, default=REPO_ROOT / "policies", help="builtin policy dir")
    parser.add_argument("--sunset", type=str, default=None, help="sunset executable (default: .venv/bin/sunset)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    return parser.parse_args(argv)


def copy_catalog(builtin: Path, dest: Path, copies: int) -> int:
    """Copy every ``<group>/<id>.yaml`` to ``dest/copyK/<group>/<id>-copyK.yaml``; return the count."""
    sources = sorted(builtin.rglob("*.yaml"))
    if not sources:
        raise ValueError(f"no policy files under {builtin}")
    for number in range(1, copies + 1):
        for source in sources:
            target = dest / f"copy{number}" / source.parent.relative_to(builtin) / f"{source.stem}-copy{number}.yaml"
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
    return len(sources) * copies


def original_id(rule_id: str) -> str:
    """``foo-copy2`` -> ``foo``: the builtin policy a copied finding stands for."""
    for number in range(1, COPIES + 1):
        suffix = f"-copy{number}"
        if rule_id.endswith(suffix):
            return rule_id[: -len(suffix)]
    return rule_id


def read_report(out: Path) -> dict:
    try:
        data = json.loads(out.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ToolFailed(f"sunset output is not JSON ({exc}); see {out}") from exc
    if not isinstance(data, dict):
        raise ToolFailed(f"sunset JSON is a {type(data).__name__}, not a report object")
    return data


def findings_by_rule(data: dict) -> Counter[str]:
    return Counter(finding.get("rule_id", "?") for finding in data.get("findings") or [])


def describe(measurement: Measurement, data: dict, expected_files: int) -> None:
    """Record files_scanned and the findings, total and per rule, from a JSON report."""
    summary = data.get("summary") or {}
    scanned = summary.get("files_scanned")
    by_rule = findings_by_rule(data)
    measurement.details.update(files_scanned=scanned, findings=sum(by_rule.values()), by_rule=by_rule)
    if scanned != expected_files:
        measurement.notes.append(f"WARNING: files_scanned={scanned}, expected {expected_files}")


def time_catalogs(exe: Path, corpus: Corpus, work: Path, extra: Path, repeat: int) -> list[Measurement]:
    """x1 and x3, one untimed warm-up each (fills the catalog cache), then interleaved runs."""
    env = {**os.environ, "SUNSET_CACHE_DIR": str(work / "cache")}
    base = [str(exe), "scan", str(corpus.roots_dir), *SUNSET_FLAGS]
    cases = [
        (Measurement("x1 (builtin)"), base),
        (Measurement(f"x{COPIES + 1} (builtin + {COPIES} copies)"), [*base, "--policies", str(extra)]),
    ]
    # Exit 1 is accepted with a valid JSON report: the one-file roots carry per-file errors.
    for measurement, cmd in cases:
        out = work / f"scan-{measurement.tool.split()[0]}.json"
        cold = run_timed(cmd, out=out, ok={0, 1}, env=env)
        measurement.notes.append(f"{measurement.tool}: warm-up run, catalog cache cold: {cold:.3f} s")
        describe(measurement, read_report(out), len(corpus.files))
    for round_number in range(repeat):
        progress(f"round {round_number + 1}/{repeat}")
        for measurement, cmd in cases:
            measurement.runs.append(run_timed(cmd, out=work / "scan.json", ok={0, 1}, env=env))
    return [measurement for measurement, _ in cases]


def time_startup(exe: Path, corpus: Corpus, work: Path, repeat: int) -> Measurement:
    """`sunset scan <smallest file>`: interpreter, imports, cached catalog, one small file."""
    measurement = Measurement("start-up (1 small file, builtin)")
    smallest = min(corpus.sources, key=lambda path: path.stat().st_size)
    env = {**os.environ, "SUNSET_CACHE_DIR": str(work / "cache")}
    cmd = [str(exe), "scan", str(smallest), *SUNSET_FLAGS]
    run_timed(cmd, out=work / "startup.json", ok={0, 1}, env=env)  # warm-up
    measurement.runs = [run_timed(cmd, out=work / "startup.json", ok={0, 1}, env=env) for _ in range(repeat)]
    measurement.details["file"] = smallest
    measurement.notes.append(f"file: {smallest} ({smallest.stat().st_size} bytes)")
    return measurement


def check_multiple(one: Counter[str], three: Counter[str]) -> list[str]:
    """Rules whose x3 count (original + copies) is not exactly 3x their x1 count."""
    folded: Counter[str] = Counter()
    for rule_id, count in three.items():
        folded[original_id(rule_id)] += count
    factor = COPIES + 1
    return [
        f"{rule}: x1={one.get(rule, 0)}, x{factor}={folded.get(rule, 0)}"
        for rule in sorted(set(one) | set(folded))
        if folded.get(rule, 0) != factor * one.get(rule, 0)
    ]


def fmt(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds:.3f}"


def print_table(cases: list[Measurement], startup: Measurement, policy_counts: tuple[int, int]) -> None:
    print("| measurement | policies | best (s) | median (s) | runs (s) | findings | files scanned |")
    print("|---|---:|---:|---:|---|---:|---:|")
    for measurement, policies in zip(cases, policy_counts, strict=True):
        runs = ", ".join(fmt(run) for run in measurement.runs)
        print(
            f"| {measurement.tool} | {policies} | {fmt(measurement.best)} | "
            f"{fmt(statistics.median(measurement.runs))} | {runs} | "
            f"{measurement.details['findings']} | {measurement.details['files_scanned']} |"
        )
    runs = ", ".join(fmt(run) for run in startup.runs)
    print(
        f"| {startup.tool} | {policy_counts[0]} | {fmt(startup.best)} | "
        f"{fmt(statistics.median(startup.runs))} | {runs} | - | 1 |"
    )


def print_verdicts(cases: list[Measurement], startup: Measurement) -> None:
    one, three = cases
    ratio = (three.best or 0) / (one.best or 1)
    factor = COPIES + 1
    print()
    print(f"* ratio x{factor}/x1 (best): **{ratio:.2f}** (target <= {TARGET_RATIO})")
    print(f"* start-up (best): **{fmt(startup.best)} s** (target < {TARGET_STARTUP} s)")
    one_rules, three_rules = one.details["by_rule"], three.details["by_rule"]
    print(
        f"* findings: x1={one.details['findings']} from {len(one_rules)} rule(s); "
        f"x{factor}={three.details['findings']} from {len(three_rules)} rule(s); "
        f"{factor} x {one.details['findings']} = {factor * one.details['findings']}"
    )
    mismatches = check_multiple(one_rules, three_rules)
    if mismatches:
        print(f"* WARNING: {len(mismatches)} rule(s) not exactly x{factor}:")
        for line in mismatches:
            print(f"  * {line}")
    else:
        print(f"* every rule that fires gives exactly x{factor} its findings (original + copies)")
    for note in [*one.notes, *three.notes, *startup.notes]:
        print(f"* {note}")


def print_report(info: dict[str, str], corpus: Corpus, results: tuple, repeat: int) -> None:
    cases, startup, policy_counts = results
    print("# sunset scan: catalog size x1 vs x3\n")
    for key, value in info.items():
        print(f"* {key}: {value}")
    print(f"* input: {corpus.describe()}")
    print(f"* best of {repeat} interleaved runs after one warm-up each (catalog cache warm)\n")
    print_table(cases, startup, policy_counts)
    print_verdicts(cases, startup)


def run(args: argparse.Namespace, work: Path) -> int:
    exe = resolve_sunset(args.sunset)
    if exe is None:
        print("error: sunset not found (.venv/bin/sunset or PATH); pass --sunset", file=sys.stderr)
        return 2
    load_before = load_average()
    corpus = build_corpus(args.corpus.resolve(), work / "roots", args.roots)
    progress(corpus.describe())
    builtin = len(list(args.policies.rglob("*.yaml")))
    copied = copy_catalog(args.policies, work / "extra-policies", COPIES)
    progress(f"policies: {builtin} builtin + {copied} copied in {work / 'extra-policies'}")
    progress(f"scan x1 / x{COPIES + 1}: warm-up + {args.repeat} interleaved round(s)")
    cases = time_catalogs(exe, corpus, work, work / "extra-policies", args.repeat)
    progress(f"start-up: {args.startup_repeat} run(s)")
    startup = time_startup(exe, corpus, work, args.startup_repeat)
    info = machine_info({"sunset": tool_version([str(exe), "--version"])}, load_before)
    info["python (this script)"] = info.pop("python (parse floor)", "?")
    print_report(info, corpus, (cases, startup, (builtin, builtin + copied)), args.repeat)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="sunset-catalog-"))
    try:
        return run(args, work)
    except (ValueError, ToolFailed) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        if args.keep:
            progress(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
