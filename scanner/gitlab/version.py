"""`sunset scan --gitlab URL`: the release the instance runs, read from GitLab's `GET /api/v4/version`
(it answers `{"version": "16.11.2-ee", "revision": "…"}` to any authenticated user). The one request
sunset makes for `--from` is the one the user asked for with `--gitlab`; nothing else goes out.

The token is `SUNSET_GITLAB_TOKEN` (`PRIVATE-TOKEN`), else, inside a CI job, `CI_JOB_TOKEN` (`JOB-TOKEN`).
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from collections.abc import Mapping

_RELEASE = re.compile(r"^(\d+)\.(\d+)(?:\.\d+)?(?:[-+].*)?$")


def asked(url: str | None, env: Mapping[str, str]) -> str:
    """`--from gitlab`: the release of the instance at `url` (`--gitlab`), or at `CI_SERVER_URL` inside a
    job; what went wrong is a usage error (exit 2) that says what to do."""
    from scanner.core.exits import UsageError

    url = url or env.get("CI_SERVER_URL", "")
    if not url:
        raise UsageError("--from gitlab needs --gitlab URL (inside a GitLab CI job, CI_SERVER_URL is used)")
    try:
        return instance_release(url, env)
    except VersionError as exc:
        raise UsageError(f"--gitlab: {exc}") from None


class VersionError(Exception):
    """Why the instance's release could not be read; the message says what to do."""


def release_of(version: str) -> str:
    """`16.11.2-ee` → `16.11`; anything else is a VersionError."""
    m = _RELEASE.match(version.strip())
    if not m:
        raise VersionError(f"GitLab answered version {version!r}, not a release (MAJOR.MINOR.PATCH)")
    return f"{int(m.group(1))}.{int(m.group(2))}"


def instance_release(url: str, env: Mapping[str, str], timeout: float = 30.0) -> str:
    """The MAJOR.MINOR release of the GitLab instance at `url` (its web address)."""
    if not url.startswith(("http://", "https://")):
        raise VersionError(f"`{url}` is not an http(s) URL")
    headers = {"Accept": "application/json", "User-Agent": "gitlab-sunset"}
    if token := env.get("SUNSET_GITLAB_TOKEN"):
        headers["PRIVATE-TOKEN"] = token
    elif job := env.get("CI_JOB_TOKEN"):
        headers["JOB-TOKEN"] = job
    else:
        raise VersionError("reading the instance's version needs an access token in SUNSET_GITLAB_TOKEN "
                           "(any scope that reads the API), or give the release with --from X.Y")
    request = urllib.request.Request(url.rstrip("/") + "/api/v4/version", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:  # noqa: S310 (http(s) checked above)
            body = answer.read(1 << 16)
    except urllib.error.HTTPError as exc:
        hint = " (the token was refused)" if exc.code == 401 else ""
        raise VersionError(f"GET /api/v4/version: {exc.code} {exc.reason}{hint}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise VersionError(f"GET /api/v4/version: {getattr(exc, 'reason', exc)}") from None
    try:
        data = json.loads(body)
    except ValueError:
        raise VersionError("GET /api/v4/version: the answer is not JSON (is the URL GitLab's?)") from None
    if not isinstance(data, dict) or not isinstance(data.get("version"), str):
        raise VersionError("GET /api/v4/version: the answer has no `version`")
    return release_of(data["version"])
