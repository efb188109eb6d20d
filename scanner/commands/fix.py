"""`sunset fix [PATH…]`: rewrite what the policies say can be rewritten, leaving every other byte alone.

This module is the command: flags, the scan plan (shared with `sunset scan`), and what is printed.
The work is in `scanner.fix`, imported only when the command runs. Safe fixes are applied by
default; `--unsafe` adds the ones a person must review; `--diff` prints a unified diff and
writes nothing. Exit status (`scanner.core.exits`): 0 when every fix that was tried is applied, or
`--diff` has nothing to change; 1 when `--diff` printed a change (as `ruff --diff` and `git diff
--exit-code`), or a fix was refused, overlapped another or could not be written; 2 on bad usage.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scanner.fix.run import FixRun

EXIT_OK, EXIT_INCOMPLETE = 0, 1
# `sunset scan --config`'s help: the same search (scanner.engine.discovery)
CONFIG_HELP = ("configuration file (default: .sunset.yml, or a pyproject.toml with a tool.sunset table, in the working "
               "directory or a parent up to the repository root, else from the scanned folder up)")
_MAX_FILE_BYTES = 2 * 1024 * 1024
_SHOWN = {
    "fixed": "fixed",
    "unsafe": "unsafe, not applied",
    "skipped": "not fixed",
    "overlap": "not fixed",
    "refused": "refused",
    "unwritten": "not written",
}


def configure(subparsers: Any) -> None:
    """Add `fix` to sunset's subparsers (argparse only; the fixer loads when the command runs)."""
    p = subparsers.add_parser(
        "fix",
        help="rewrite deprecated usage that a policy can fix, keeping every other byte",
        description="Apply the policies' automatic fixes to the findings `sunset scan` reports for the same "
        "paths. Only the fixed text changes; each rewritten file is checked to still parse as intended.",
    )
    p.add_argument("paths", nargs="*", default=["."], help="directories or files (default: .)")
    p.add_argument("--unsafe", action="store_true", help="also apply fixes that need review (see docs/fix.md)")
    p.add_argument("--diff", action="store_true", help="print a unified diff and change nothing")
    p.add_argument("--target", help="fix only what breaks on this GitLab release (17, 17.10): findings removed at or "
                   "before it (default: the configuration file's target; without one, every finding a policy can "
                   "fix)")
    p.add_argument("--select", action="append", metavar="SELECTOR[,…]",
                   help="fix only findings of these policies: ids, id prefixes (graphql-) or groups (runner)")
    p.add_argument("--ignore", action="append", metavar="SELECTOR[,…]", help="leave these policies' findings alone")
    p.add_argument("--exclude", action="append", metavar="PATTERN[,PATTERN]",
                   help="skip paths matching these gitignore patterns (replaces the configuration's exclude)")
    p.add_argument("--extend-exclude", action="append", metavar="PATTERN[,PATTERN]",
                   help="skip these too (adds to the configuration's exclude)")
    p.add_argument("--policies", action="append", metavar="DIR", help="also load policies from DIR")
    p.add_argument("--config", metavar="FILE", help=CONFIG_HELP)
    p.add_argument("--show-settings", action="store_true",
                   help="print the resolved settings and where each came from, and fix nothing")
    # what `scanner.commands.scan.plan` reads and `sunset fix` does not offer
    p.set_defaults(func=run, baseline=None, write_baseline=None, fail_on=None, max_file_size=_MAX_FILE_BYTES)


def run(args: argparse.Namespace) -> int:
    from scanner.commands.scan import plan
    from scanner.commands.settings import Sources, render
    from scanner.core.redact import MASK, redact
    from scanner.fix.run import run_fix

    sources = Sources()
    fix_plan = plan(args, sources=sources)
    # a target, from the flag or the configuration file, narrows the fixes to what breaks there, as the
    # scan's exit status counts only that; without one every fixable finding is fixed
    file_target = sources.loaded is not None and sources.loaded.config.target is not None
    only_breaking = args.target is not None or file_target
    if getattr(args, "show_settings", False):
        rows = [row for row in sources.rows if row[0] != "fail_on"]  # `fix` has no exit status by severity
        target = next(value for name, value, _ in rows if name == "target")
        what = f"only what breaks on {target}" if only_breaking else "every finding a policy can fix"
        rows.append(("fixes", what + (", and --unsafe ones" if args.unsafe else ""),
                     "--target" if args.target is not None else sources.where("target") if file_target
                     else "default: no target given"))
        sys.stdout.write(render(Sources(sources.loaded, rows), "fix"))
        return EXIT_OK
    result = run_fix(fix_plan, unsafe=args.unsafe, write=not args.diff, only_breaking=only_breaking)
    report_stream = sys.stderr if args.diff else sys.stdout
    if args.diff:
        diff = "".join(result.diffs)
        shown = redact(diff, diff=True)  # what holds a secret is masked, in changed and context lines
        sys.stdout.write(shown)
        if shown != diff:
            masked = sum(a != b for a, b in zip(diff.splitlines(), shown.splitlines(), strict=False))
            report_stream.write(f"sunset fix: {masked} diff line(s) hold secrets, shown as {MASK}: the diff is for "
                                "reading, not for `git apply`; `sunset fix` without --diff applies the fixes.\n")
    for o in result.outcomes:
        loc = o.site.finding.location
        status = "would fix" if args.diff and o.status == "fixed" else _SHOWN[o.status]
        detail = redact(o.detail)
        report_stream.write(f"{loc.path}:{loc.line}:{loc.column}: {status} [{o.site.finding.rule_id}] {detail}\n")
    report_stream.write(_summary(result, args.diff))
    incomplete = result.count("refused") + result.count("overlap") + result.count("unwritten")
    return EXIT_INCOMPLETE if incomplete or (args.diff and any(result.diffs)) else EXIT_OK


def _summary(result: FixRun, diff: bool) -> str:
    fixed, files = result.count("fixed"), result.files_changed
    parts = [f"{'would fix' if diff else 'fixed'} {fixed} finding(s) in {files} file(s)"]
    if n := result.count("unsafe"):
        parts.append(f"{n} unsafe fix(es) not applied (use --unsafe)")
    if n := result.count("skipped"):
        parts.append(f"{n} left to you")
    if n := result.count("overlap"):
        parts.append(f"{n} overlapping (run again)")
    if n := result.count("refused") + result.count("unwritten"):
        parts.append(f"{n} refused or not written")
    parts.append(f"{result.without_fix} finding(s) have no automatic fix")
    if result.not_breaking:
        parts.append(f"{result.not_breaking} not breaking at GitLab {result.report.target} left alone")
    errors = f"; {len(result.report.errors)} input error(s) (see `sunset scan`)" if result.report.errors else ""
    return "sunset fix: " + "; ".join(parts) + errors + ".\n"
