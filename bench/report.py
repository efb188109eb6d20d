"""The benchmark's output: a Markdown report on stdout and, on request, a JSON file."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench_lib import Corpus, Measurement, progress


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    if numerator is None or not denominator:
        return None
    return numerator / denominator


def fmt_ratio(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}x"


def best_by_prefix(results: list[Measurement], prefix: str) -> float | None:
    return next((m.best for m in results if m.tool.startswith(prefix)), None)


def summary_ratios(results: list[Measurement]) -> dict[str, float | None]:
    checkov = best_by_prefix(results, "checkov")
    floor = best_by_prefix(results, "parse floor")
    sunset = next((m.best for m in results if m.tool == "sunset"), None)
    return {
        "sunset vs checkov (speedup, checkov/sunset)": ratio(checkov, sunset),
        "sunset / parse floor": ratio(sunset, floor),
        "checkov / parse floor": ratio(checkov, floor),
    }


def markdown_report(results: list[Measurement], repeat: int) -> str:
    sunset = next((m.best for m in results if m.tool == "sunset"), None)
    lines = [
        "| tool | seconds (best of runs) | all runs | ratio to sunset |",
        "|---|---:|---|---:|",
    ]
    for m in results:
        if m.best is None:
            reason = (m.skipped or "").replace("|", "\\|")
            lines.append(f"| {m.tool} | skipped | {reason} | n/a |")
            continue
        runs = ", ".join(f"{run:.3f}" for run in m.runs)
        lines.append(f"| {m.tool} | {m.best:.3f} | {runs} | {fmt_ratio(ratio(m.best, sunset))} |")
    lines.append("")
    lines.extend(f"- {name}: {fmt_ratio(value)}" for name, value in summary_ratios(results).items())
    lines.append(f"- wall clock (time.perf_counter) around each run; best of the runs listed (--repeat {repeat})")
    return "\n".join(lines)


def print_report(info: dict[str, str], corpus: Corpus, results: list[Measurement], repeat: int) -> None:
    print("\n## Machine\n")
    print("\n".join(f"- {key}: {value}" for key, value in info.items()))
    print("\n## Input\n")
    print(f"- {corpus.describe()}")
    print("\n## Results\n")
    print(markdown_report(results, repeat))
    print("\n## What each tool read\n")
    for m in results:
        for note in m.notes:
            print(f"- {m.tool}: {note}")


def write_json(out: Path, info: dict[str, str], corpus: Corpus, results: list[Measurement]) -> None:
    payload: dict[str, Any] = {
        "machine": info,
        "input": corpus.as_dict(),
        "measurements": [{**asdict(m), "best": m.best} for m in results],
        "ratios": summary_ratios(results),
    }
    out.write_text(json.dumps(payload, indent=2, default=str) + "\n", encoding="utf-8")
    progress(f"wrote {out}")
