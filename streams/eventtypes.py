"""The audit event types the detectors name (GitLab's, from `ee/config/audit_events/types/*.yml`),
and sunset's own record types. No imports: every module may use these."""

from __future__ import annotations

DOWNLOAD = "repository_download_operation"
PUBLIC_DOWNLOAD = "public_repository_download_operation"
DOWNLOAD_TYPES = (DOWNLOAD, PUBLIC_DOWNLOAD)
GIT_OPERATION = "repository_git_operation"
JOB_TOKEN_AUTH = "user_authenticated_using_job_token"
ALLOWLIST_TYPES = frozenset({
    "secure_ci_job_token_project_added", "secure_ci_job_token_project_removed",
    "secure_ci_job_token_group_added", "secure_ci_job_token_group_removed",
    "secure_ci_job_token_inbound_enabled", "secure_ci_job_token_inbound_disabled",
})
# sunset's own record types, not GitLab's: a row of a project's job-token authentication log,
# a snapshot of a project's allowlists from the REST API (streams.snapshot), and an access
# found by streams.correlate.
AUTH_LOG = "sunset_job_token_auth_log"
SNAPSHOT = "sunset_job_token_allowlist_snapshot"
ACCESS = "sunset_job_token_access"
OWN_TYPES = frozenset({AUTH_LOG, SNAPSHOT, ACCESS})
