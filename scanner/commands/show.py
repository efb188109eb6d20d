"""`sunset scan --show-settings` and `--show-files`: what a scan would use and read, said instead of the
report. Settings come with where each value came from (`scanner.commands.settings`); files come from the
scan itself, told of every file it meets (`scanner.engine.filelog`)."""

from __future__ import annotations

import argparse
import dataclasses

from scanner.commands.scan import plan
from scanner.commands.settings import Sources, render
from scanner.engine.scan import scan


def show_settings(args: argparse.Namespace) -> str:
    """`sunset scan --show-settings`: the plan is resolved (the configuration is read and checked) and
    described; nothing is scanned."""
    sources = Sources()
    plan(args, sources=sources)
    return render(sources)


def show_files(args: argparse.Namespace) -> str:
    """`sunset scan --show-files`: the scan runs with a listener on every file it meets; one line per
    file or folder, sorted by path: `read` with the kind and why, or `skipped` and why."""
    seen: dict[str, tuple[str, str]] = {}

    def tell(path: str, what: str, why: str) -> None:
        seen.setdefault(path, (what, why))

    p = plan(args)
    options = dataclasses.replace(p.options, files=tell)
    scan(p.paths, p.policies, options)
    width = min(60, max((len(path) for path in seen), default=0))
    lines = [f"{what:<7}  {path:<{width}}  {why}" for path, (what, why) in sorted(seen.items())]
    read = sum(1 for what, _ in seen.values() if what == "read")
    lines.append(f"\n{read} file(s) read, {len(seen) - read} skipped.")
    return "\n".join(lines) + "\n"
