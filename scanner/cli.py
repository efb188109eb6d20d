"""The `sunset` command. Subcommands import what they need when they run, so `scan` starts fast.

Exit codes are in `scanner.core.exits`.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from scanner import __version__
from scanner.commands import allowlist, comment, distribute, instance
from scanner.commands import fix as fix_command
from scanner.commands.fix import CONFIG_HELP
from scanner.core.exits import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, UsageError, unforeseen_error, unforeseen_os_error
from scanner.core.files import printable
from scanner.core.redact import redact_error
from scanner.core.results import GITLAB_ORIGINS
from scanner.core.writing import write_file
from scanner.report.formats import FORMATS
from streams.cli import register as register_stream
from streams.host import Host as StreamHost

if TYPE_CHECKING:
    from scanner.rules.policy import Policy

FAIL_ON = ("error", "warning", "info", "never")


class _Progress:
    """`scanning… N files` (an instance scan: `N projects`) on a terminal's stderr, only once a scan
    takes more than a moment (`SUNSET_PROGRESS_AFTER` seconds, 0.5 unless set); whatever the format and
    wherever the report goes."""

    def __init__(self, stream: TextIO, unit: str = "files") -> None:
        self.stream = stream
        self.unit = unit
        try:
            self.after = float(os.environ.get("SUNSET_PROGRESS_AFTER", "0.5"))
        except ValueError:
            self.after = 0.5
        self.start = time.monotonic()
        self.last = 0.0
        self.shown = False

    def __call__(self, count: int, path: str) -> None:
        now = time.monotonic()
        if now - self.start < self.after or now - self.last < 0.1:
            return
        self.last, self.shown = now, True
        self.stream.write(f"\r\033[Kscanning… {count} {self.unit}  {printable(path)[-60:]}")
        self.stream.flush()

    def done(self) -> None:
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()


def _cmd_scan(args: argparse.Namespace) -> int:
    from scanner.commands import output
    from scanner.commands import scan as scan_command

    if args.show_settings or args.show_files:
        from scanner.commands import show as inspect

        sys.stdout.write(inspect.show_settings(args) if args.show_settings else inspect.show_files(args))
        return EXIT_OK
    quiet = args.quiet or bool(args.write_baseline)  # a baseline run records the findings, it does not list them
    targets = output.outputs(args.output, args.format, quiet, args.statistics)
    show = sys.stderr.isatty() and not args.quiet and os.environ.get("TERM") != "dumb"
    instance = bool(getattr(args, "group", None))
    progress = _Progress(sys.stderr, "projects" if instance else "files") if show else None
    report, plan = scan_command.run(args, progress)
    if progress:
        progress.done()
    if scan_command.nothing_found(report) and not args.quiet:
        sys.stderr.write(scan_command.NOTHING_FOUND)
    if args.write_baseline:
        from scanner.commands.baseline import write_baseline

        write_baseline(Path(args.write_baseline), report)
        if not args.quiet:
            sys.stderr.write(f"sunset: wrote {len(report.findings)} fingerprints to {args.write_baseline}\n")
        report = dataclasses.replace(report, findings=[], baselined=report.baselined + len(report.findings), upgrade=())
    problems = output.write(targets, lambda fmt, to_stdout: scan_command.render(report, fmt, args, plan.policies,
                                                                                 to_stdout), sys.stdout.write)
    for problem in problems:
        sys.stderr.write(f"sunset: {problem}\n")
    if problems:
        return EXIT_USAGE
    return EXIT_OK if args.exit_zero else scan_command.exit_code(report, plan.fail_on)


def _cmd_policies(args: argparse.Namespace) -> int:
    from scanner.commands.scan import load
    from scanner.report import policydocs as docs

    if args.action == "check":
        return _check_policies([Path(d) for d in args.dirs])
    policies = load([*(args.policies or ()), *(getattr(args, "policies_here", None) or ())])
    if args.action == "list":
        sys.stdout.write(_policy_list(policies, getattr(args, "format", "text")))
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


def _check_policies(dirs: list[Path]) -> int:
    """`sunset policies check DIR…`: every problem of every policy file, one line each; exit 2 if any."""
    from scanner.commands.scan import load
    from scanner.rules.catalog import PolicyLoadError, check_policies

    try:
        count, problems = check_policies(dirs, load([]))
    except PolicyLoadError as exc:  # a folder that does not exist, a file that cannot be read
        raise UsageError(str(exc)) from None
    for problem in problems:
        sys.stdout.write(problem + "\n")
    files = len({p.rsplit(":", 3)[0] for p in problems})
    said = f"{len(problems)} problem(s) in {files} of {count} policy file(s)" if problems else (
        f"{count} policy file(s), no problems")
    sys.stderr.write(f"sunset policies check: {said}\n")
    return EXIT_USAGE if problems else EXIT_OK


def _policy_list(policies: list[Policy], fmt: str) -> str:
    """The catalog: a table with a header, or JSON (id, title, deprecated_in, removed_in, fix tier)."""
    from scanner.report.options import fix_tiers

    tiers = fix_tiers(policies)
    if fmt == "json":
        import json

        rows = [{"id": p.id, "title": p.data.title, "deprecated_in": p.data.deprecated_in,
                 "removed_in": p.removal.release, "removal": p.removal.status, "fix_tier": tiers.get(p.id),
                 "origin": p.data.origin} for p in policies]
        return json.dumps(rows, indent=2, ensure_ascii=False) + "\n"
    width = max((len(p.id) for p in policies), default=10)
    lines = [f"{'POLICY':<{width}}  {'REMOVED':>8}  FIX  TITLE"]
    for p in policies:
        fix = "[*]" if tiers.get(p.id) == "safe" else "(*)" if p.id in tiers else ""
        removed = p.removal.release or (p.removal.status if p.removal.status in ("canceled", "withdrawn") else "—")
        local = f"  [{p.data.origin}]" if p.data.origin not in GITLAB_ORIGINS else ""  # a policy of your own
        lines.append(f"{p.id:<{width}}  {removed:>8}  {fix:<3}  {p.data.title}{local}")
    return "\n".join(lines) + "\n"


def _cmd_completion(args: argparse.Namespace) -> int:
    from scanner.commands.completion import script

    sys.stdout.write(script(build_parser(), args.shell))
    return EXIT_OK


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of bytes: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of bytes: {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sunset", description="Find GitLab deprecations before you upgrade.")
    parser.add_argument("--version", action="version", version=f"sunset {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    scan = sub.add_parser(
        "scan", help="scan repositories for deprecated GitLab usage",
        description="Report what the given repositories, settings files and scripts use that GitLab deprecates or "
        "removes, with the release that removes it and the fix. Exit status: 0 clean, 1 findings or input errors "
        "at --fail-on, 2 sunset could not run.")
    scan.add_argument("paths", nargs="*", default=["."],
                      help="directories or files (default: .); `-` reads one file from standard input")
    scan.add_argument("--stdin-filename", metavar="NAME",
                      help="the name of the file read from `-`: its kind, where its local includes start and the "
                           "path shown (default: a pipeline file, .gitlab-ci.yml in the working directory, shown as -)")
    scan.add_argument("--format", choices=tuple(FORMATS), default="text", help="the report on stdout (default: text)")
    scan.add_argument("--output", "-o", action="append", metavar="[FORMAT=]FILE",
                      help="FILE: write --format to FILE instead of stdout; FORMAT=FILE: also write FORMAT to FILE "
                           "(repeatable: one run writes json, codequality and sarif)")
    scan.add_argument("--quiet", "-q", action="store_true",
                      help="print nothing (the exit status tells); --output files are still written")
    scan.add_argument("--statistics", action="store_true",
                      help="print how many findings of each policy instead of the report ([*]: sunset fix rewrites it)")
    scan.add_argument("--exit-zero", action="store_true",
                      help="exit 0 even with findings or input errors (2 still means sunset could not run)")
    scan.add_argument("--target", help="GitLab release you upgrade to: 17, 17.10 or 17.10.2 (the patch is ignored; "
                      "default: the newest release any policy names)")
    scan.add_argument("--from", dest="current", metavar="X.Y",
                      help="GitLab release the instance runs today: changes in effect by then are info, and the "
                      "report shows GitLab's required upgrade stops up to --target and what breaks at each; "
                      "`--from gitlab` (implied by --gitlab URL without --group) asks the instance")
    scan.add_argument("--fail-on", choices=FAIL_ON, help="lowest severity that fails the run (default: warning)")
    scan.add_argument("--config", metavar="FILE", help=CONFIG_HELP)
    scan.add_argument("--show-settings", action="store_true",
                      help="print the resolved configuration and where each value came from, and exit")
    scan.add_argument("--show-files", action="store_true",
                      help="print every file the scan reads (as which kind, and why) or skips (and why), and exit")
    scan.add_argument("--diff-base", metavar="REF", help="compare with the merge base of HEAD and REF (a branch or "
                      "commit): report what the change adds and fixes, and fail only on what it adds")
    scan.add_argument("--baseline", metavar="FILE", help="report only findings not in this baseline")
    scan.add_argument("--write-baseline", metavar="FILE", help="record today's findings as the baseline")
    scan.add_argument("--policies", action="append", metavar="DIR", help="also load policies from DIR")
    scan.add_argument("--select", action="append", metavar="SELECTOR[,…]", help="run only these policies: ids, id "
                      "prefixes (graphql-) or groups (runner); replaces the configuration's select")
    scan.add_argument("--ignore", action="append", metavar="SELECTOR[,…]", help="do not run these policies (ids, "
                      "prefixes or groups); adds to the configuration's ignore")
    scan.add_argument("--exclude", action="append", metavar="PATTERN[,PATTERN]",
                      help="skip paths matching these gitignore patterns (replaces the configuration's exclude)")
    scan.add_argument("--extend-exclude", action="append", metavar="PATTERN[,PATTERN]",
                      help="skip these too (adds to the configuration's exclude)")
    scan.add_argument("--ci-config", action="append", metavar="PATH",
                      help="the project's custom CI/CD configuration file (GitLab setting), read as a pipeline root; "
                           "also `path@group/project` or a URL (recorded, not fetched)")
    scan.add_argument("--max-file-size", type=_positive, default=2 * 1024 * 1024, metavar="BYTES",
                      help="skip larger files with an input error (default: 2 MiB, GitLab's limit)")
    scan.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                      help="auto (default): on a terminal, unless NO_COLOR or TERM=dumb; FORCE_COLOR forces it")
    instance.configure(scan)  # --gitlab URL --group PATH: argparse only, python-gitlab loads when it runs
    scan.set_defaults(func=_cmd_scan)

    pol = sub.add_parser("policies", help="the policy catalog")
    pol.add_argument("--policies", action="append", metavar="DIR", help="also load policies from DIR")
    actions = pol.add_subparsers(dest="action", required=True)
    listing = actions.add_parser("list", help="one line per policy ([*]: sunset fix rewrites it, (*): with --unsafe)")
    listing.add_argument("--format", choices=("text", "json"), default="text", help="text (default) or json")
    show = actions.add_parser("show", help="a policy's documentation")
    show.add_argument("id")
    gen = actions.add_parser("docs", help="generate docs/policies from the policy data")
    check = actions.add_parser("check", help="check policy files: every problem of every file, then exit 2 if any",
                               description="Load every *.yaml policy below each DIR and print every problem of every "
                               "file as `file:line: field: problem`, and policy ids used twice (also against the "
                               "built-in policies). Exit 2 if there is any problem, 0 otherwise.")
    check.add_argument("dirs", nargs="+", metavar="DIR", help="a folder of policy files (searched recursively)")
    for action in (listing, show, gen):  # `policies list --policies DIR` as well as `policies --policies DIR list`
        action.add_argument("--policies", action="append", metavar="DIR", dest="policies_here",
                            help="also load policies from DIR")
    gen.add_argument("--out", default="docs/policies")
    gen.add_argument("--check", action="store_true", help="exit 1 if the docs are stale, write nothing")
    pol.set_defaults(func=_cmd_policies)
    done = sub.add_parser("completion", help="print a shell completion script (bash, zsh or fish)",
                          description="Print a completion script for your shell, generated from sunset's own "
                          "options. bash: `source <(sunset completion bash)` in ~/.bashrc; zsh: `source "
                          "<(sunset completion zsh)` in ~/.zshrc; fish: `sunset completion fish > "
                          "~/.config/fish/completions/sunset.fish`.")
    done.add_argument("shell", choices=("bash", "zsh", "fish"))
    done.set_defaults(func=_cmd_completion)
    comment.configure(sub)  # argparse only; python-gitlab loads when `sunset comment` runs
    fix_command.configure(sub)  # argparse only; scanner.fix loads when `sunset fix` runs
    allowlist.configure(sub)  # argparse only; python-gitlab loads when `sunset allowlist` runs
    distribute.configure(sub)  # argparse only; Faust loads when `sunset instance worker|publish` runs
    # streams.cli imports only argparse; the commands import Faust when they run, and mask and write as scan does
    register_stream(sub, StreamHost(redact=redact_error, write_file=write_file))
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except UsageError as exc:
        return _said(str(exc))
    except BrokenPipeError:
        return EXIT_OK
    except KeyboardInterrupt:  # Ctrl-C: the shell's status for SIGINT, without a traceback
        sys.stderr.write("sunset: interrupted\n")
        return 130
    except OSError as exc:  # a file or folder no check before foresaw: one line, not a traceback
        return _said(unforeseen_os_error(exc))
    except Exception as exc:  # noqa: BLE001 - a bug, said in one line with where it happened
        return _said(unforeseen_error(exc))


def _said(message: str) -> int:
    sys.stderr.write(f"sunset: {redact_error(message)}\n")
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
