"""Every audit event type sunset reads, and every one its sample uses, is one of GitLab's.

GitLab declares each audit event type in a file of its own, `config/audit_events/types/<name>.yml`
(`ee/config/audit_events/types/` for EE's). `GITLAB_TYPES` names the file that declares each type
sunset knows, as read in GitLab's sources (gitlab-org/gitlab and its mirrors: gitlabhq/gitlabhq
for the FOSS part; diffblue/gitlab, pavankalisetti009/gitlab for ee/). The sample once announced a
visibility change as `project_feature_updated`, which is no type of GitLab's; GitLab's is
`project_visibility_level_updated` (`Audit::ProjectChangesAuditor`).
"""

from __future__ import annotations

import json

from streamkit import SAMPLE, SNAPSHOT

from streams import audit
from streams.detectors.base import ANY
from streams.detectors.gaps import WITHOUT_ALLOWLIST
from streams.detectors.registry import DETECTORS

EE = "ee/config/audit_events/types/"
GITLAB_TYPES = {
    "repository_download_operation": EE + "repository_download_operation.yml",
    "public_repository_download_operation": EE + "public_repository_download_operation.yml",
    "repository_git_operation": EE + "repository_git_operation.yml",
    "user_authenticated_using_job_token": EE + "user_authenticated_using_job_token.yml",
    "job_artifact_downloaded": EE + "job_artifact_downloaded.yml",
    "project_visibility_level_updated": EE + "project_visibility_level_updated.yml",
    "secure_ci_job_token_project_added": EE + "secure_ci_job_token_project_added.yml",
    "secure_ci_job_token_project_removed": EE + "secure_ci_job_token_project_removed.yml",
    "secure_ci_job_token_group_added": EE + "secure_ci_job_token_group_added.yml",
    "secure_ci_job_token_group_removed": EE + "secure_ci_job_token_group_removed.yml",
    "secure_ci_job_token_inbound_enabled": EE + "secure_ci_job_token_inbound_enabled.yml",
    "secure_ci_job_token_inbound_disabled": EE + "secure_ci_job_token_inbound_disabled.yml",
    "authenticated_with_password": "config/audit_events/types/authenticated_with_password.yml",
}


def sample_types() -> list[str]:
    """The `event_type` of every object in the sample, in order (arrays unpacked, bad lines skipped)."""
    found: list[str] = []
    for line in SAMPLE.read_text().splitlines():
        try:
            parsed = json.loads(line)
        except ValueError:
            continue  # the sample's deliberately truncated line
        for item in parsed if isinstance(parsed, list) else [parsed]:
            if isinstance(item, dict) and "event_type" in item:
                found.append(item["event_type"])
    return found


def test_every_event_type_of_the_sample_is_gitlabs_or_sunsets_own() -> None:
    used = set(sample_types())
    assert sorted(used - set(GITLAB_TYPES) - audit.OWN_TYPES) == []
    assert sorted(used & audit.OWN_TYPES) == [audit.AUTH_LOG]  # a row of the job-token authentication log
    assert "project_visibility_level_updated" in used and "project_feature_updated" not in used


def test_the_sample_visibility_change_has_the_shape_gitlab_sends() -> None:
    """`audit_changes(:visibility_level, as: 'visibility_level', event_type: ...)`: details `change`,
    `from`, `to` (`Gitlab::VisibilityLevel.level_name`) and the message `Audit::Changes` builds."""
    changes = [json.loads(line) for line in SAMPLE.read_text().splitlines()
               if '"project_visibility_level_updated"' in line]
    assert [(c["entity_path"], c["details"]["change"], c["details"]["from"], c["details"]["to"],
             c["details"]["custom_message"]) for c in changes] == [
        ("acme/website", "visibility_level", "Private", "Public", "Changed visibility_level from Private to Public")]


def test_every_gitlab_type_the_detectors_read_is_gitlabs() -> None:
    read = {kind for detector in DETECTORS for kind in detector.reads} - {ANY}
    assert sorted(read - set(GITLAB_TYPES) - audit.OWN_TYPES) == []
    assert sorted(set(WITHOUT_ALLOWLIST) - set(GITLAB_TYPES)) == []
    named = {audit.DOWNLOAD, audit.PUBLIC_DOWNLOAD, audit.GIT_OPERATION, audit.JOB_TOKEN_AUTH, audit.VISIBILITY,
             *audit.ALLOWLIST_TYPES}
    assert sorted(named - set(GITLAB_TYPES)) == []


def test_the_snapshot_is_no_event_stream() -> None:
    """The allowlist snapshot is REST API responses, not audit events: it carries no `event_type`."""
    assert "event_type" not in SNAPSHOT.read_text()
