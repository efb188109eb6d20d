"""`sunset allowlist --gitlab URL --group PATH [--apply]`: the CI/CD job-token accesses GitLab recorded
that its allowlist enforcement (18.0) rejects, per project, and — only with `--apply` — the entries
that let them in. The dry run is the default. docs/job-token-allowlist.md compares it with GitLab's own
`ci:job_tokens:allowlist:autopopulate_and_enforce` task."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from scanner.core.exits import EXIT_FINDINGS, EXIT_OK, UsageError

if TYPE_CHECKING:
    from scanner.instance.allowlist import Outcome


def configure(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("allowlist", help="job-token accesses the 18.0 allowlist enforcement rejects (GitLab's log)")
    p.add_argument("--gitlab", metavar="URL", help="the GitLab instance (default: CI_SERVER_URL)")
    p.add_argument("--group", metavar="PATH", required=True, help="the group, its subgroups included")
    p.add_argument("--include-archived", action="store_true", help="also archived projects")
    p.add_argument("--apply", action="store_true", help="add the missing entries (default: dry run)")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--output", "-o", metavar="FILE", help="write the result to FILE instead of stdout")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from scanner.core.redact import MASK
    from scanner.core.writing import write_file
    from scanner.instance import allowlist
    from scanner.instance.api import Api, ApiError

    url = args.gitlab or os.environ.get("CI_SERVER_URL", "")
    if not url.startswith(("http://", "https://")):
        raise UsageError(f"--gitlab: `{url}` is not an http(s) URL")
    token = os.environ.get("SUNSET_GITLAB_TOKEN") or None
    if token is None:
        raise UsageError("SUNSET_GITLAB_TOKEN must hold a token with the Maintainer role on the projects "
                         "(the job-token scope and its log are not readable with a job token)")
    try:
        outcome = allowlist.run(Api(url, token), args.group.strip("/"), args.include_archived, args.apply)
    except ApiError as exc:
        raise UsageError(f"--gitlab: {exc}") from None
    out = _json(outcome, args.apply) if args.format == "json" else _text(outcome, args.apply)
    out = out.replace(token, MASK)  # an error GitLab (or a proxy) answered may quote the token back
    if args.output:
        reason = write_file(Path(args.output), out)
        if reason is not None:
            raise UsageError(f"cannot write the result to {args.output}: {reason}")
    else:
        sys.stdout.write(out)
    left = len(outcome.gaps) - len(outcome.added)
    return EXIT_FINDINGS if left or outcome.problems else EXIT_OK


def _json(outcome: Outcome, applied: bool) -> str:
    from dataclasses import asdict

    from scanner.core.redact import redact_error

    data = {"version": 1, "applied": applied, "rejected": [asdict(g) for g in outcome.gaps],
            "added": [asdict(g) for g in outcome.added],
            "problems": [{"project": p, "message": redact_error(m)} for p, m in outcome.problems]}
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _text(outcome: Outcome, applied: bool) -> str:
    from scanner.core.redact import redact_error, visible

    gaps, added, problems = outcome.gaps, outcome.added, outcome.problems
    lines = [f"{len(gaps)} job-token access(es) that allowlist enforcement rejects"
             + (f"; {len(added)} added to allowlists" if applied else " (dry run; --apply adds them)") + ":"]
    for g in gaps:
        today = "  (rejected today: the project already limits access)" if g.inbound_enabled else ""
        lines.append(visible(f"  {g.target} ← {g.origin}  last authorized {g.last_authorized}") + today)
    lines += [f"  problem: {visible(p)}: {visible(redact_error(m))}" for p, m in problems]
    return "\n".join(lines) + "\n"
