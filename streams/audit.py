"""GitLab's audit events as sunset names them: the event types the detectors read (GitLab's, from
`ee/config/audit_events/types/*.yml`), sunset's own record types, and event time (`created_at` to
epoch seconds, and the one form sunset prints). Imports nothing of sunset: every module may use it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

DOWNLOAD = "repository_download_operation"
PUBLIC_DOWNLOAD = "public_repository_download_operation"
DOWNLOAD_TYPES = (DOWNLOAD, PUBLIC_DOWNLOAD)
GIT_OPERATION = "repository_git_operation"
JOB_TOKEN_AUTH = "user_authenticated_using_job_token"
# `Audit::ProjectChangesAuditor`: details `{change: "visibility_level", from: "Private", to: "Public"}`,
# message "Changed visibility_level from Private to Public" (`Gitlab::VisibilityLevel.level_name`).
VISIBILITY = "project_visibility_level_updated"
ALLOWLIST_TYPES = frozenset({
    "secure_ci_job_token_project_added", "secure_ci_job_token_project_removed",
    "secure_ci_job_token_group_added", "secure_ci_job_token_group_removed",
    "secure_ci_job_token_inbound_enabled", "secure_ci_job_token_inbound_disabled",
})
# sunset's own record types, not GitLab's: a row of a project's job-token authentication log,
# a snapshot of a project's allowlists from the REST API (streams.events), and an access
# found by streams.detectors.correlate.
AUTH_LOG = "sunset_job_token_auth_log"
SNAPSHOT = "sunset_job_token_allowlist_snapshot"
ACCESS = "sunset_job_token_access"
OWN_TYPES = frozenset({AUTH_LOG, SNAPSHOT, ACCESS})


_fromisoformat = datetime.fromisoformat


def parse_time(value: Any) -> float | None:
    """GitLab's `created_at` (ISO 8601, usually `…Z`) as epoch seconds; naive means UTC.

    `datetime.fromisoformat` (C) takes GitLab's form as it is, faster than any parsing in
    Python around it could.
    """
    if type(value) is not str or not value:
        return None
    try:
        moment = _fromisoformat(value)
    except ValueError:
        try:  # Ruby's `to_s` form, "2024-06-01 10:00:00 UTC"
            moment = _fromisoformat(value.strip().replace(" UTC", "+00:00"))
        except ValueError:
            return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


_SECONDS: dict[int, str] = {}  # a bounded cache: findings print the same few seconds again and again


def iso(ts: float) -> str:
    """Epoch seconds as the one timestamp form sunset prints, `2025-06-02T09:00:01.200Z`."""
    whole = int(ts // 1)
    millis = round((ts - whole) * 1000)
    if millis == 1000:
        whole, millis = whole + 1, 0
    text = _SECONDS.get(whole)
    if text is None:
        if len(_SECONDS) > 65536:
            _SECONDS.clear()
        text = _SECONDS[whole] = datetime.fromtimestamp(whole, UTC).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{text}.{millis:03d}Z"
