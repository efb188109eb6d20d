"""`sunset scan --gitlab URL --group PATH`: the flags of an instance scan, and the scan itself.

The token comes from `SUNSET_GITLAB_TOKEN` (a personal, group or project access token with `read_api`),
else, inside a GitLab CI job, from `CI_JOB_TOKEN` (which reaches only what the job's project may). The
URL defaults to `CI_SERVER_URL` inside a job.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from scanner.core.exits import UsageError

if TYPE_CHECKING:
    from scanner.core.results import Report
    from scanner.engine.scan import Plan


def configure(scan: argparse.ArgumentParser) -> None:
    group = scan.add_argument_group("instance scan (through GitLab's API)")
    group.add_argument("--gitlab", metavar="URL", help="scan a group's projects on this GitLab instance")
    group.add_argument("--group", metavar="PATH", help="the group (full path), its subgroups included")
    group.add_argument("--ref", help="read every project at this ref (default: each project's default branch)")
    group.add_argument("--include-archived", action="store_true", help="also scan archived projects")
    group.add_argument("--fetch-remote", action="store_true", help="fetch `include: remote:` URLs")
    group.add_argument("--concurrency", type=int, default=8, metavar="N", help="projects read at once (default 8)")
    group.add_argument("--cache-dir", metavar="DIR", help="file cache by blob id (default ~/.cache/sunset/blobs)")
    group.add_argument("--state", metavar="FILE", help="journal of finished projects; run again to resume")


def default_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "sunset" / "blobs"


def run(args: argparse.Namespace, plan: Plan, progress: Callable[[int, str], None] | None = None) -> Report:
    """The instance scan; `progress(projects done, the last one)`."""
    from scanner.instance.api import ApiError
    from scanner.instance.run import InstanceOptions, scan_instance

    url = args.gitlab or os.environ.get("CI_SERVER_URL", "")
    if not url:
        raise UsageError("--group needs --gitlab URL (inside a GitLab CI job, CI_SERVER_URL is used)")
    if not url.startswith(("http://", "https://")):
        raise UsageError(f"--gitlab: `{url}` is not an http(s) URL")
    if not args.group:
        raise UsageError("--gitlab needs --group PATH (the group whose projects to scan)")
    if args.concurrency < 1:
        raise UsageError("--concurrency: at least 1")
    token = os.environ.get("SUNSET_GITLAB_TOKEN") or None
    job_token = None if token else os.environ.get("CI_JOB_TOKEN") or None
    options = InstanceOptions(
        url=url, group=args.group.strip("/"), token=token, job_token=job_token, ref=args.ref,
        archived=args.include_archived, fetch_remote=args.fetch_remote, concurrency=args.concurrency,
        cache_dir=Path(args.cache_dir) if args.cache_dir else default_cache(),
        state=Path(args.state) if args.state else None, progress=progress,
    )
    try:
        return scan_instance(plan.policies, plan.options, options)
    except ApiError as exc:
        raise UsageError(f"--gitlab: {exc}") from None
