"""The `sunset` command. Subcommands import what they need when they run, so `scan` starts fast.

Exit codes are in `scanner.core.exits`.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TextIO

from scanner import __version__
from scanner.commands import allowlist, comment, instance
from scanner.commands import fix as fix_command
from scanner.core.exits import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, UsageError
from scanner.report.formats import FORMATS
from streams.cli import register as register_stream

FAIL_ON = ("error", "warning", "info", "never")


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


def _cmd_scan(args: argparse.Namespace) -> int:
    from scanner.commands import scan as scan_command

    progress = _Progress(sys.stderr) if sys.stderr.isatty() and args.format == "text" else None
    report, plan = scan_command.run(args, progress)
    if progress:
        progress.done()
    if scan_command.nothing_found(report):
        sys.stderr.write(scan_command.NOTHING_FOUND)
    if args.write_baseline:
        scan_command.write_baseline(Path(args.write_baseline), report)
        sys.stderr.write(f"sunset: wrote {len(report.findings)} fingerprints to {args.write_baseline}\n")
    out = scan_command.render(report, args, plan.policies)
    if args.output:
        Path(args.output).write_text(out, encoding="utf-8")
    else:
        sys.stdout.write(out)
    return scan_command.exit_code(report, plan.fail_on)


def _cmd_policies(args: argparse.Namespace) -> int:
    from scanner.commands.scan import load
    from scanner.report import policydocs as docs

    policies = load(args.policies)
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
        sys.stdout.write(docs.policy_page(match[0]))
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
    scan.add_argument("--format", choices=tuple(FORMATS), default="text")
    scan.add_argument("--output", "-o", help="write the report to FILE instead of stdout")
    scan.add_argument("--target", help="GitLab release you upgrade to, MAJOR.MINOR (default: newest any policy names)")
    scan.add_argument("--fail-on", choices=FAIL_ON, help="lowest severity that fails the run (default: warning)")
    scan.add_argument("--config", metavar="FILE", help="configuration file (default: ./.sunset.yml)")
    scan.add_argument("--baseline", metavar="FILE", help="report only findings not in this baseline")
    scan.add_argument("--write-baseline", metavar="FILE", help="record today's findings as the baseline")
    scan.add_argument("--policies", action="append", metavar="DIR", help="also load policies from DIR")
    scan.add_argument("--ci-config", action="append", metavar="PATH",
                      help="the project's custom CI/CD configuration file (GitLab setting), read as a pipeline root; "
                           "also `path@group/project` or a URL (recorded, not fetched)")
    scan.add_argument("--max-file-size", type=int, default=2 * 1024 * 1024, metavar="BYTES")
    scan.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    instance.configure(scan)  # --gitlab URL --group PATH: argparse only, python-gitlab loads when it runs
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
    comment.configure(sub)  # argparse only; python-gitlab loads when `sunset comment` runs
    fix_command.configure(sub)  # argparse only; scanner.fix loads when `sunset fix` runs
    allowlist.configure(sub)  # argparse only; python-gitlab loads when `sunset allowlist` runs
    register_stream(sub)  # streams.cli imports only argparse; the commands import Faust when they run
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except UsageError as exc:
        from scanner.core.redact import redact_error  # a bad value quoted back may be a secret

        sys.stderr.write(f"sunset: {redact_error(str(exc))}\n")
        return EXIT_USAGE
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
