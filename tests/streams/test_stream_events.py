"""Parsing, validation and routing of GitLab audit events (streams.events)."""

from __future__ import annotations

import json

import pytest
from streamkit import event

from streams.audit import iso, parse_time
from streams.events import BOM, Rejected, compact, normalize, read


def test_one_event_an_array_and_garbage() -> None:
    """`read` is the one parser of the replay and the worker: one well-formed event comes back as
    itself; an array as one item per element, a rejection saying which element; garbage as one
    rejection."""
    one = event("repository_download_operation", 1, ident=1)
    assert read(json.dumps(one).encode()) == normalize(dict(one))
    many = read(json.dumps([one, {"event_type": ""}, 5]).encode())
    assert isinstance(many, list) and many[0] == normalize(dict(one))
    assert many[1:] == [Rejected("missing event_type", 1), Rejected("not a JSON object", 2)]
    assert read(json.dumps([5]).encode()) == [Rejected("not a JSON object")]  # one element: no index
    assert read(b"7") == [Rejected("not a JSON object")]
    bad = read(b'{"a": ')
    assert isinstance(bad, list) and len(bad) == 1 and isinstance(bad[0], Rejected)
    assert bad[0].reason.startswith("invalid JSON: ") and bad[0].element is None


def test_a_byte_order_mark_is_not_part_of_the_json() -> None:
    one = event("repository_download_operation", 1, ident=1)
    assert read(BOM + json.dumps(one).encode()) == normalize(dict(one))
    assert read(BOM + b"[]") == []


def test_created_at_forms() -> None:
    assert parse_time("2025-06-02T09:00:00.250Z") == 1748854800.25
    assert parse_time("2025-06-02T11:00:00+02:00") == 1748854800.0
    assert parse_time("2025-06-02 09:00:00 UTC") == 1748854800.0
    assert parse_time("2025-06-02T09:00:00") == 1748854800.0  # naive means UTC
    assert parse_time("yesterday") is None
    assert parse_time(1748854800) is None
    assert iso(1748854800.25) == "2025-06-02T09:00:00.250Z"


def test_download_is_normalized_and_routed_to_both_stages() -> None:
    raw = event("repository_download_operation", 10, project="acme/app", author=11, ident=42)
    out = normalize(raw)
    assert not isinstance(out, Rejected)
    assert (out["id"], out["ts"], out["pkey"], out["akey"], out["download"]) == (
        "42", 1748854810.0, "acme/app", "11", True)


def test_anonymous_download_has_no_actor() -> None:
    out = normalize(event("public_repository_download_operation", 1, author=-1, ident="u-1"))
    assert not isinstance(out, Rejected)
    assert (out["pkey"], out["akey"]) == ("g/p", None)


def test_fields_only_in_details_are_found() -> None:
    """Older streaming bodies carried author_name, ip_address, entity_path… only in `details`."""
    raw = {"id": 1, "event_type": "repository_download_operation", "created_at": "2025-06-02T09:00:00Z",
           "author_id": "5", "entity_type": "Project",
           "details": {"author_name": "Al", "ip_address": "1.2.3.4", "entity_path": "g/a"}}
    out = normalize(raw)
    assert not isinstance(out, Rejected)
    assert (out["author_id"], out["author_name"], out["ip_address"], out["entity_path"]) == (5, "Al", "1.2.3.4", "g/a")


def test_rest_api_audit_events_are_read_too() -> None:
    """`GET /projects/:id/audit_events` presents the type as `event_name` and the rest in `details`."""
    raw = {"id": 81, "author_id": 5, "entity_id": 6, "entity_type": "Project",
           "event_name": "repository_download_operation",
           "details": {"custom_message": "Repository Download Started", "author_name": "Al",
                       "author_email": "al@example.com", "target_id": 6, "target_type": "Project",
                       "target_details": "flight", "ip_address": "10.1.2.3", "entity_path": "flightjs/flight",
                       "event_name": "repository_download_operation"},
           "created_at": "2025-06-02T09:00:41.885Z"}
    out = normalize(raw)
    assert not isinstance(out, Rejected)
    assert (out["event_type"], out["id"], out["author_name"], out["ip_address"], out["pkey"], out["akey"]) == (
        "repository_download_operation", "81", "Al", "10.1.2.3", "flightjs/flight", "5")
    only_in_details = {**raw, "event_name": None}
    out = normalize(only_in_details)
    assert not isinstance(out, Rejected) and out["event_type"] == "repository_download_operation"


def test_git_operation_counts_as_download_only_for_upload_pack() -> None:
    clone = normalize(event("repository_git_operation", 1, details={"custom_message": {"protocol": "ssh",
                                                                                        "action": "git-upload-pack"}}))
    push = normalize(event("repository_git_operation", 1, details={"custom_message": {"protocol": "ssh",
                                                                                       "action": "git-receive-pack"}}))
    assert not isinstance(clone, Rejected) and not isinstance(push, Rejected)
    assert (clone["download"], clone["action"], clone["pkey"]) == (True, "git-upload-pack", None)
    assert (push["download"], push["akey"]) == (False, "7")  # still a project event, for correlation


def test_allowlist_event_reads_the_message_and_target() -> None:
    message = "Project acme/app was added to inbound list of allowed projects for acme/lib"
    raw = event("secure_ci_job_token_project_added", 1, project="acme/lib", target_id=102, target_details="app",
                details={"custom_message": message})
    out = normalize(raw)
    assert not isinstance(out, Rejected)
    assert (out["target_id"], out["target_details"], out["pkey"]) == (102, "app", "acme/lib")
    assert out["message"] == "Project acme/app was added to inbound list of allowed projects for acme/lib"


@pytest.mark.parametrize(("raw", "reason"), [
    ([1, 2], "not a JSON object"),
    ({"id": 1}, "missing event_type"),
    ({"event_type": ""}, "missing event_type"),
    (event("repository_download_operation", 1, created_at="soon"), "missing or invalid created_at"),
    (event("repository_download_operation", 1, entity_path=None), "missing entity_path"),
    ({**event("repository_download_operation", 1), "id": None}, "missing id"),
    (event("user_authenticated_using_job_token", 1, ip_address=None),
     "job-token login without author_id or ip_address"),
    (event("sunset_job_token_access", 1), "sunset_job_token_access is sunset's internal record type"),
    ({"event_type": "sunset_job_token_auth_log", "origin_project": "a/b"},
     "auth-log record needs origin_project, accessed_project, last_authorized_at"),
])
def test_rejections_name_the_reason(raw: object, reason: str) -> None:
    assert normalize(raw) == Rejected(reason)


def test_unused_event_types_pass_without_checks() -> None:
    out = normalize({"event_type": "user_signed_in", "entity_type": "User", "created_at": "never"})
    assert not isinstance(out, Rejected)
    assert (out["pkey"], out["akey"]) == (None, None)


def test_compact_keeps_only_what_the_stages_read() -> None:
    """Every event keeps what the stages and their detectors read of any event; an allowlist change
    also its target and sentence, a visibility change its new level."""
    common = ["event_type", "id", "ts", "author_id", "author_name", "ip_address", "entity_path", "entity_id",
              "download", "pkey", "akey"]
    bodies = {
        "repository_download_operation": event("repository_download_operation", 1, ident=3, project="a/b"),
        "secure_ci_job_token_project_added": event(
            "secure_ci_job_token_project_added", 2, ident=4, project="a/b", target_id=7, target_details="tools",
            details={"custom_message": "Added project g/tools to the job token scope allowlist"}),
        "project_visibility_level_updated": event(
            "project_visibility_level_updated", 3, ident=5, project="a/b", details={"to": "public"}),
    }
    out = {}
    for kind, body in bodies.items():
        normalized = normalize(body)
        assert not isinstance(normalized, Rejected), normalized
        out[kind] = compact(normalized)
    assert {kind: sorted(record) for kind, record in out.items()} == {
        "repository_download_operation": sorted(common),
        "secure_ci_job_token_project_added": sorted([*common, "target_id", "target_details", "message"]),
        "project_visibility_level_updated": sorted([*common, "visibility"]),
    }
    assert (out["secure_ci_job_token_project_added"]["message"], out["project_visibility_level_updated"]["visibility"]
            ) == ("Added project g/tools to the job token scope allowlist", "public")


def test_the_fast_path_gives_exactly_what_the_general_path_gives() -> None:
    """normalize() takes GitLab's usual body on a fast path; _normalize_any() is the reference."""
    import copy
    import json

    from streamkit import SAMPLE

    from streams.events import _normalize_any

    bodies = [json.loads(line) for line in SAMPLE.read_text().splitlines()[:59]]
    bodies += [event("repository_git_operation", 1, ident=5, details={"custom_message": {"action": "git-upload-pack"}}),
               event("secure_ci_job_token_group_removed", 2, target_id=7, target_details="tools",
                     details={"custom_message": "Group a/tools was removed from list of allowed groups for g/p"}),
               event("repository_download_operation", 3, ident=None), event("user_signed_in", 4, ip=""),
               event("repository_git_operation", 5, details={"custom_message": {"action": "git-receive-pack"}}),
               event("repository_git_operation", 6, author=-1,
                     details={"custom_message": {"action": "git-upload-pack"}}),
               event("repository_git_operation", 7, entity_type="Group", details="not a mapping"),
               event("repository_git_operation", 8, created_at="soon")]
    for body in bodies:
        if isinstance(body, dict):
            assert normalize(copy.deepcopy(body)) == _normalize_any(copy.deepcopy(body)), body
