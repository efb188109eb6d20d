"""`sunset comment --report FILE`: one sticky note on the merge request, edited on every pipeline.

This module is the command: flags and CI variables become coordinates, the token is read from the
environment, the report becomes a body (`scanner.report.markdown`), and every failure becomes one
line on stderr with exit 2. The GitLab side (python-gitlab, retries, finding our note) lives in
`scanner.gitlab.notes`, imported only when the command runs, so `sunset scan` never loads it.

The token is never printed: it is read from an environment variable (never a flag, which would
show in process lists), rejected without echo when malformed, and every error text is scrubbed.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from scanner.gitlab.retry import RetryPolicy, Target, unreachable

EXIT_OK, EXIT_FAIL = 0, 2
DEFAULT_TOKEN_ENV = "SUNSET_GITLAB_TOKEN"
_TOKEN_CHARS = re.compile(r"[\x21-\x7e]+")
REPORT_MAX_BYTES = 256 * 1024 * 1024  # a JSON report of a very large instance scan


class CommentError(Exception):
    """Why the comment could not be posted, in one line, already free of the token."""


def configure(subparsers: Any) -> None:
    """Add `comment` to sunset's subparsers (argparse only; GitLab's client loads when it runs)."""
    p = subparsers.add_parser(
        "comment",
        help="post or update sunset's note on a GitLab merge request",
        description="Post the report as one note on the merge request, or edit the note posted before. "
        "Coordinates default to GitLab CI's variables; the token comes from an environment variable.",
    )
    p.add_argument("--report", required=True, metavar="FILE", help="a report from `sunset scan --format json` "
                   "(with --diff-base, the comment shows what the merge request adds and fixes)")
    p.add_argument("--base-report", metavar="FILE", help="the target branch's report (e.g. its pipeline's artifact): "
                   "the comment shows what --report adds and fixes against it, matched by fingerprint")
    p.add_argument("--gitlab-url", metavar="URL", help="GitLab server (default: $CI_API_V4_URL or $CI_SERVER_URL)")
    p.add_argument("--project", metavar="ID", help="project id or full path (default: $CI_PROJECT_ID)")
    p.add_argument("--mr", type=int, metavar="IID", help="merge request IID (default: $CI_MERGE_REQUEST_IID)")
    p.add_argument("--token-env", default=DEFAULT_TOKEN_ENV, metavar="NAME",
                   help=f"environment variable holding the GitLab token (default: {DEFAULT_TOKEN_ENV})")
    p.add_argument("--dry-run", action="store_true", help="print the comment instead of posting it")
    p.add_argument("--verbose", "-v", action="store_true", help="log requests and retries to stderr")
    p.set_defaults(func=run)


def _server_url(args: argparse.Namespace, env: Mapping[str, str]) -> str | None:
    url = args.gitlab_url or env.get("CI_API_V4_URL") or env.get("CI_SERVER_URL")
    if not url:
        return None
    url = url.rstrip("/")
    url = url[: -len("/api/v4")] if url.endswith("/api/v4") else url
    if not url.startswith(("https://", "http://")):
        raise CommentError(f"GitLab URL must start with https:// or http://, got {url!r}")
    return url


def coordinates(args: argparse.Namespace, env: Mapping[str, str]) -> Target:
    """Flags first, then GitLab CI's predefined variables."""
    url = _server_url(args, env)
    project = args.project or env.get("CI_PROJECT_ID")
    mr_text = str(args.mr) if args.mr is not None else env.get("CI_MERGE_REQUEST_IID", "")
    missing = [
        name for name, value in (
            ("--gitlab-url (or CI_SERVER_URL)", url),
            ("--project (or CI_PROJECT_ID)", project),
            ("--mr (or CI_MERGE_REQUEST_IID; set only in merge request pipelines)", mr_text),
        ) if not value
    ]
    if missing or not url or not project:
        raise CommentError("missing " + ", ".join(missing))
    if not mr_text.isdigit() or int(mr_text) < 1:
        raise CommentError(f"merge request IID must be a positive number, got {mr_text!r}")
    return Target(url=url, project=project, mr=int(mr_text))


def read_token(name: str, env: Mapping[str, str]) -> str:
    token = env.get(name, "").strip()
    if not token:
        raise CommentError(f"no token: set {name} to a GitLab access token with the api scope")
    if not _TOKEN_CHARS.fullmatch(token):
        raise CommentError(f"{name} contains spaces or control characters; it is not a GitLab token")
    return token


def read_report(path: Path) -> dict[str, Any]:
    import json

    from scanner.core.files import ReadProblem, read_settings_text

    text = read_settings_text(path, REPORT_MAX_BYTES)
    if isinstance(text, ReadProblem):
        raise CommentError(f"{path}: cannot read the report: {text.message.removesuffix('; not scanned')}")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        reason = "nested too deeply" if isinstance(exc, RecursionError) else exc
        raise CommentError(f"{path}: cannot read the report: {reason}") from None
    keys = ("target", "findings", "errors", "summary")
    if not isinstance(data, dict) or data.get("version") != 1 or any(k not in data for k in keys):
        raise CommentError(f"{path}: not a sunset JSON report, version 1 (`sunset scan --format json`)")
    return data


def scrub(text: str, token: str) -> str:
    """One line, with the token (and anything that looks like a token header) masked."""
    if token:
        text = text.replace(token, "****")
    text = re.sub(r"(?i)(private-token|authorization|job-token)(['\"]?\s*[:=]\s*['\"]?)[^\s'\",}]+", r"\1\2****", text)
    return " ".join(text.split())[:500]


def _post(target: Target, token: str, body: str, clean: bool, retry: RetryPolicy, verbose: bool) -> str:
    import requests

    from scanner.gitlab import notes as gitlab_notes

    try:
        return gitlab_notes.publish(target, token, body, clean, retry, verbose)
    except gitlab_notes.GitlabError as exc:
        raise CommentError(scrub(gitlab_notes.describe(exc, target), token)) from None
    except requests.RequestException as exc:
        why = unreachable(exc, gitlab_notes.TIMEOUT) or type(exc).__name__
        raise CommentError(scrub(f"cannot reach GitLab at {target.url}: {why}", token)) from None


def _render(render: Callable[..., str], report: Any, env: Mapping[str, str], path: Path) -> str:
    try:
        return render(report, env, full_report=artifact_url(env, str(path)))
    except (KeyError, TypeError, AttributeError) as exc:
        raise CommentError(f"{path}: a finding or error does not follow the JSON contract ({exc!r})") from None


def _commits(report: dict[str, Any]) -> dict[str, str]:
    """The `diff.base` and `diff.commit` of a `--diff-base` report that are git commit ids (40 hex digits)."""
    diff = report.get("diff")
    if not isinstance(diff, dict):
        return {}
    return {k: v for k in ("base", "commit") if isinstance(v := diff.get(k), str) and re.fullmatch(r"[0-9a-f]{40}", v)}


def artifact_url(env: Mapping[str, str], path: str) -> str | None:
    """The report as the job's artifact (`$CI_JOB_URL/artifacts/file/PATH`), when it lies in the project."""
    job = env.get("CI_JOB_URL", "").rstrip("/")
    parts = Path(path).parts
    if not job.startswith(("https://", "http://")) or Path(path).is_absolute() or ".." in parts or not parts:
        return None
    return f"{job}/artifacts/file/{'/'.join(parts)}"


def against(head: dict[str, Any], base: dict[str, Any], name: str) -> dict[str, Any]:
    """`head` with a `diff` against `base` (as `sunset scan --diff-base` writes it): findings matched by
    fingerprint, input errors by path and message."""
    try:
        before = {f["fingerprint"] for f in base["findings"]}
        ours = {f["fingerprint"] for f in head["findings"]}
        old_errors = {(e["path"], e["message"]) for e in base["errors"]}
        findings = [f | {"change": "existing" if f["fingerprint"] in before else "new"} for f in head["findings"]]
        errors = [e | {"change": "existing" if (e["path"], e["message"]) in old_errors else "new"}
                  for e in head["errors"]]
        fixed = [f for f in base["findings"] if f["fingerprint"] not in ours]
    except (KeyError, TypeError) as exc:
        raise CommentError(f"a report does not follow the JSON contract ({exc!r})") from None
    new = sum(1 for f in findings if f["change"] == "new")
    diff = {"base": name, "commit": "", "note": "", "new": new, "existing": len(findings) - new, "fixed": fixed,
            "new_errors": sum(1 for e in errors if e["change"] == "new")}
    return head | {"findings": findings, "errors": errors, "diff": diff}


def run(args: argparse.Namespace, retry: RetryPolicy | None = None, env: Mapping[str, str] | None = None) -> int:
    """`sunset comment`; `retry` and `env` are for tests (short waits, a fake CI)."""
    from scanner.core.redact import redact_data, redact_error
    from scanner.report import markdown

    env = os.environ if env is None else env
    try:
        report = read_report(Path(args.report))
        commits = _commits(report)
        try:
            report = redact_data(report)  # a report from elsewhere may hold secrets
        except RecursionError:
            raise CommentError(f"{args.report}: not a sunset JSON report (nested too deeply)") from None
        report.get("diff", {}).update(commits)  # commit ids look like tokens to the redactor; they are public
        if getattr(args, "base_report", None):
            name = env.get("CI_MERGE_REQUEST_TARGET_BRANCH_NAME") or f"the report {args.base_report}"
            report = against(report, read_report(Path(args.base_report)), name)
        body = _render(markdown.render_json, report, env, Path(args.report))
        if args.dry_run:
            sys.stdout.write(body)
            return EXIT_OK
        target = coordinates(args, env)
        token = read_token(args.token_env, env)
        clean = markdown.is_clean(report)
        outcome = _post(target, token, body, clean, retry or RetryPolicy(), getattr(args, "verbose", False))
    except CommentError as exc:
        sys.stderr.write(f"sunset comment: {redact_error(str(exc), prose=True)}\n")  # a name may hold a secret
        return EXIT_FAIL
    sys.stdout.write(f"sunset comment: {outcome}\n")
    return EXIT_OK
