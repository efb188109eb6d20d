"""The `sunset` command. Subcommands import what they need when they run, so `scan` starts fast.

Exit codes: 0 nothing at or above `--fail-on` and no input errors; 1 findings at or above
the threshold, or input errors; 2 sunset could not run (bad arguments, bad policy file).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import TextIO

from scanner import __version__

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
FAIL_ON = ("error", "warning", "info", "never")


class UsageError(Exception):
    """Something the user must fix before sunset can run (exit 2)."""


class _Progress:
    """`scanning… N files` on a terminal's stderr, only once a scan takes more than a moment."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.start = time.monotonic()
        self.last = 0.0
        self.shown = False

    def __call__(self, count: int, path: str) -> None:
        now = time.monotonic()
        if now - self.start < 0.5 or now - self.last < 0.1:
            return
        self.last, self.shown = now, True
        self.stream.write(f"\r\033[Kscanning… {count} files  {path[-60:]}")
        self.stream.flush()

    def done(self) -> None:
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()


def _policy_dirs(extra: list[str] | None) -> list[Path]:
    from scanner.policy import builtin_policy_dir

    return [builtin_policy_dir(), *(Path(d) for d in extra or [])]


def _load(extra: list[str] | None) -> list:  # type: ignore[type-arg]
    from scanner.policy import PolicyLoadError, load_policies

    try:
        return load_policies(_policy_dirs(extra))
    except PolicyLoadError as exc:
        raise UsageError(str(exc)) from None


def _default_target(policies: list) -> str:  # type: ignore[type-arg]
    from scanner.versions import Version

    releases = {
        Version.parse(r)
        for p in policies
        for r in (p.data.deprecated_in, p.data.removed_in)
        if r
    }
    return str(max(releases)) if releases else "19.0"


def _cmd_scan(args: argparse.Namespace) -> int:
    from scanner.engine import ScanOptions, scan
    from scanner.output import jsonfmt, text
    from scanner.versions import SEVERITY_RANK, Version

    policies = _load(args.policies)
    try:
        target = Version.parse(args.target or _default_target(policies))
    except ValueError as exc:
        raise UsageError(f"--target: {exc}") from None
    progress = _Progress(sys.stderr) if sys.stderr.isatty() and args.format == "text" else None
    report = scan([Path(p) for p in args.paths], policies, ScanOptions(target, args.max_file_size, progress))
    if progress:
        progress.done()
    if args.format == "json":
        out = jsonfmt.render(report)
    else:
        tty = args.output is None and sys.stdout.isatty()
        color = args.color == "always" or (args.color == "auto" and tty and "NO_COLOR" not in os.environ)
        out = text.render(report, color=color)
    if args.output:
        Path(args.output).write_text(out, encoding="utf-8")
    else:
        sys.stdout.write(out)
    if report.errors:
        return EXIT_FINDINGS
    if args.fail_on == "never":
        return EXIT_OK
    threshold = SEVERITY_RANK[args.fail_on]
    return EXIT_FINDINGS if any(SEVERITY_RANK[f.severity] >= threshold for f in report.findings) else EXIT_OK


def _cmd_policies(args: argparse.Namespace) -> int:
    from scanner import docs

    policies = _load(args.policies)
    if args.action == "list":
        width = max((len(p.id) for p in policies), default=10)
        for p in policies:
            removed = p.data.removed_in or "—"
            sys.stdout.write(f"{p.id:<{width}}  {removed:>5}  {p.data.title}\n")
        return EXIT_OK
    if args.action == "show":
        match = [p for p in policies if p.id == args.id]
        if not match:
            raise UsageError(f"no policy {args.id!r}; see `sunset policies list`")
        sys.stdout.write(docs.policy_markdown(match[0]))
        return EXIT_OK
    out = Path(args.out)
    if args.check:
        stale = docs.stale_docs(policies, out)
        for name in stale:
            sys.stderr.write(f"{out / name}: stale; run `sunset policies docs --out {out}`\n")
        return EXIT_FINDINGS if stale else EXIT_OK
    for name in docs.write_docs(policies, out):
        sys.stdout.write(f"wrote {out / name}\n")
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sunset", description="Find GitLab deprecations before you upgrade.")
    parser.add_argument("--version", action="version", version=f"sunset {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    scan = sub.add_parser("scan", help="scan repositories for deprecated GitLab usage")
    scan.add_argument("paths", nargs="*", default=["."], help="directories or files (default: .)")
    scan.add_argument("--format", choices=("text", "json"), default="text")
    scan.add_argument("--output", "-o", help="write the report to FILE instead of stdout")
    scan.add_argument("--target", help="GitLab release you upgrade to, MAJOR.MINOR (default: newest any policy names)")
    scan.add_argument("--fail-on", choices=FAIL_ON, default="warning")
    scan.add_argument("--policies", action="append", metavar="DIR", help="also load policies from DIR")
    scan.add_argument("--max-file-size", type=int, default=2 * 1024 * 1024, metavar="BYTES")
    scan.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    scan.set_defaults(func=_cmd_scan)

    pol = sub.add_parser("policies", help="the policy catalog")
    pol.add_argument("--policies", action="append", metavar="DIR", help="also load policies from DIR")
    actions = pol.add_subparsers(dest="action", required=True)
    actions.add_parser("list", help="one line per policy")
    show = actions.add_parser("show", help="a policy's documentation")
    show.add_argument("id")
    gen = actions.add_parser("docs", help="generate docs/policies from the policy data")
    gen.add_argument("--out", default="docs/policies")
    gen.add_argument("--check", action="store_true", help="exit 1 if the docs are stale, write nothing")
    pol.set_defaults(func=_cmd_policies)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except UsageError as exc:
        sys.stderr.write(f"sunset: {exc}\n")
        return EXIT_USAGE
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
