"""The allowed lateness as a promise with a boundary, tried on arbitrary arrival orders (hypothesis).

* Within it — every event arrives at most the lateness after the newest event read before it —
  the replay's document is the one of the events in event-time order: the same downloads, the
  same findings, nothing late.
* Beyond it, an event is applied as of the bound (`late` lists it with both times), and whatever
  the order: the same input gives the same document every time, and no finding's times contradict
  each other (nothing last seen before it was first seen, resolved before it was seen, or a window
  that ends before it starts).
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from streamkit import event, limits

from streams.audit import parse_time
from streams.events import snapshot_records
from streams.replay import replay_lines

PROJECTS = ["g/app", "g/lib", "g/web"]
CI = ["ci/deploy", "ci/build"]
USERS = [7, 8]
CLONE = {"custom_message": {"protocol": "http", "action": "git-upload-pack"}}
SNAPSHOT = {"taken_at": "2025-06-02T08:00:00Z", "projects": {
    "g/lib": {"inbound_enabled": True, "allowlist": [{"id": 1, "path_with_namespace": "ci/build"}],
              "groups_allowlist": []}}}


def allowlist(second: float, verb: str, origin: str, target: str) -> dict[str, Any]:
    where = "to" if verb == "added" else "from"
    return event(f"secure_ci_job_token_project_{verb}", second, project=target, details={
        "custom_message": f"Project {origin} was {verb} {where} inbound list of allowed projects for {target}"})


def visibility(second: float, project: str, to: str) -> dict[str, Any]:
    return event("project_visibility_level_updated", second, project=project, details={
        "custom_message": f"Changed visibility_level from Private to {to}", "change": "visibility_level",
        "from": "Private", "to": to})


@st.composite
def happenings(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A few minutes of one small instance: job-token logins and the artifact downloads or clones
    they authenticate, allowlist changes, visibility changes, downloads of both types, scrapes."""
    out: list[dict[str, Any]] = []
    for n in range(draw(st.integers(5, 40))):
        second = draw(st.integers(0, 240)) + draw(st.sampled_from([0.0, 0.5]))
        user, project = draw(st.sampled_from(USERS)), draw(st.sampled_from(PROJECTS))
        kind = draw(st.sampled_from(["access", "clone-access", "add", "remove", "visibility", "download",
                                     "public-download", "scrape"]))
        if kind in ("access", "clone-access"):
            origin = draw(st.sampled_from(CI))
            out.append(event("user_authenticated_using_job_token", second, project=origin, author=user,
                             ip=f"10.0.0.{user}", ident=f"login-{n}", target_type="Ci::Build"))
            late = second + draw(st.sampled_from([0.5, 2.0, 4.5]))
            if kind == "access":
                out.append(event("job_artifact_downloaded", late, project=project, author=user,
                                 ip=f"10.0.0.{user}", ident=f"art-{n}"))
            else:
                out.append(event("repository_git_operation", late, project=project, author=user,
                                 ip=f"10.0.0.{user}", ident=f"clone-{n}", details=CLONE))
        elif kind in ("add", "remove"):
            out.append(allowlist(second, "added" if kind == "add" else "removed", draw(st.sampled_from(CI)), project)
                       | {"id": f"change-{n}"})
        elif kind == "visibility":
            out.append(visibility(second, project, draw(st.sampled_from(["Public", "Internal", "Private"])))
                       | {"id": f"vis-{n}"})
        elif kind in ("download", "public-download"):
            type_ = "public_repository_download_operation" if kind == "public-download" else \
                "repository_download_operation"
            out.append(event(type_, second, project=project, author=user, ident=f"dl-{n}"))
        else:
            for i, target in enumerate(PROJECTS):
                out.append(event("repository_git_operation", second + i, project=target, author=user,
                                 ident=f"scrape-{n}-{i}", details=CLONE))
    return out


SETTINGS = {"mass_download_projects": 2, "mass_download_window": 60.0, "correlation_window": 5.0}


def replay(events: list[dict[str, Any]], lateness: float) -> dict[str, Any]:
    lines = [json.dumps(e).encode() + b"\n" for e in events]
    return replay_lines(lines, limits(allowed_lateness=lateness, **SETTINGS), snapshot_records(SNAPSHOT))


def by_id(doc: dict[str, Any]) -> dict[str, Any]:
    return {f["id"]: f for f in doc["findings"]}


def contradictions(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The findings whose times contradict each other, and late entries applied before their time."""
    bad = []
    for f in doc["findings"]:
        if "first_seen" in f and f["first_seen"] > f["last_seen"]:
            bad.append(f)
        if f.get("resolved_at") is not None and f["resolved_at"] < f["first_seen"]:
            bad.append(f)
        if f["kind"] == "mass_download" and f["window"]["start"] > f["window"]["end"]:
            bad.append(f)
    return bad + [e for e in doc["late"] if e["applied_as_of"] < e["created_at"]]


@given(happenings(), st.sampled_from([5.0, 20.0, 60.0]), st.randoms(use_true_random=False))
def test_within_the_lateness_the_document_is_the_in_order_one(events: list[dict[str, Any]], lateness: float,
                                                              rng: Any) -> None:
    """Each event delivered up to (not beyond) the lateness after its time: every event arrives
    within the lateness of the newest one read before it."""
    ordered = sorted(events, key=lambda e: e["created_at"])
    delivered = sorted(events, key=lambda e: _seconds(e) + rng.uniform(0, lateness))
    expected, got = replay(ordered, lateness), replay(delivered, lateness)
    assert (got["stats"]["late"], got["late"]) == (0, [])
    assert got["downloads"] == expected["downloads"]
    assert by_id(got) == by_id(expected)
    assert contradictions(got) == []


@given(happenings(), st.sampled_from([0.0, 5.0, 20.0]), st.randoms(use_true_random=False))
def test_beyond_the_lateness_the_document_is_the_same_every_time_and_never_contradicts_itself(
        events: list[dict[str, Any]], lateness: float, rng: Any) -> None:
    delivered = list(events)
    rng.shuffle(delivered)  # any order: many events late
    first = replay(delivered, lateness)
    assert replay(delivered, lateness) == first
    assert contradictions(first) == []
    assert sum(sum(d.values()) for d in first["downloads"].values()) == len(
        {e["id"] for e in events if e["event_type"].endswith("repository_download_operation")})
    for late in first["late"]:  # applied as of the bound, after its own time
        assert late["applied_as_of"] >= late["created_at"]


def _seconds(raw: dict[str, Any]) -> float:
    ts = parse_time(raw["created_at"])
    assert ts is not None
    return ts
