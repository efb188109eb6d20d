"""The detectors as plain functions over dicts: exact state, exact findings."""

from __future__ import annotations

import random
from typing import Any

from streamkit import event, limits

from streams.events import Rejected, normalize
from streams.replay import Engine
from streams.settings import DetectorSettings
from streams.stages import DUPLICATE, NOTHING, actor_stage, project_stage

BASE = 1748854800.0  # streamkit.at(0)
CLONE = {"custom_message": {"protocol": "http", "action": "git-upload-pack"}}


def norm(raw: dict[str, Any]) -> dict[str, Any]:
    out = normalize(raw)
    assert not isinstance(out, Rejected), out
    return out


def run(events: list[dict[str, Any]], settings: DetectorSettings | None = None) -> tuple[Engine, list[dict[str, Any]]]:
    engine = Engine(settings or limits())
    findings: list[dict[str, Any]] = []
    for raw in events:
        findings += engine.apply(norm(raw))
    findings += [finding.as_dict() for finding in engine.finish()]
    return engine, findings


# --- 1. download tallies -------------------------------------------------------------------

def test_tallies_split_by_type_and_count_each_id_once() -> None:
    events = [
        event("repository_download_operation", 1, project="a/x", ident=1),
        event("repository_download_operation", 2, project="a/x", ident=1),  # repeated delivery
        event("repository_download_operation", 3, project="a/x", ident=2),
        event("public_repository_download_operation", 4, project="a/y", ident="u-1", author=-1),
    ]
    engine, findings = run(events)
    assert engine.projects["a/x"]["downloads"] == {"repository_download_operation": 2,
                                                   "public_repository_download_operation": 0}
    assert engine.projects["a/y"]["downloads"] == {"repository_download_operation": 0,
                                                   "public_repository_download_operation": 1}
    assert engine.stats == {"events": 4, "duplicates": 1, "ignored": 0, "late": 0, "users_expired": 0}
    assert findings == []


def test_a_project_under_both_types_changed_visibility_once() -> None:
    events = [event("repository_download_operation", 1, project="a/w", ident=1),
              event("public_repository_download_operation", 61, project="a/w", ident="u-1"),
              event("public_repository_download_operation", 62, project="a/w", ident="u-2")]
    _, findings = run(events)
    assert findings == [{"kind": "visibility_changed", "id": "visibility_changed:a/w", "project": "a/w",
                         "first_type": "repository_download_operation",
                         "then_type": "public_repository_download_operation", "at": "2025-06-02T09:01:01.000Z"}]


def test_dedup_record_expires_on_event_time_not_on_a_count_of_ids() -> None:
    settings = limits(dedup_ttl=60)
    events = [event("repository_download_operation", s, project="a/x", ident=s) for s in range(20)]
    events.append(event("repository_download_operation", 200, project="a/x", ident=999))
    engine, _ = run(events, settings)
    assert engine.projects["a/x"]["seen"] == {"999": 1748855000.0}  # ids 0..19 expired (older than 60 s)
    busy = [event("repository_download_operation", s / 100, project="a/x", ident=s) for s in range(5000)]
    engine, _ = run([*busy, *busy[:3000]], settings)  # 5,000 ids within 50 s, then 3,000 repeats
    assert (len(engine.projects["a/x"]["seen"]), engine.projects["a/x"]["downloads"]["repository_download_operation"],
            engine.stats["duplicates"]) == (5000, 5000, 3000)


def test_an_expired_id_counts_again() -> None:
    settings = limits(dedup_ttl=60)
    events = [event("repository_download_operation", 0, project="a/x", ident=1),
              event("repository_download_operation", 100, project="a/x", ident=2),
              event("repository_download_operation", 101, project="a/x", ident=1)]
    engine, _ = run(events, settings)
    assert engine.projects["a/x"]["downloads"]["repository_download_operation"] == 3


def test_stage_results_say_duplicate_and_write_nothing() -> None:
    projects: dict[str, Any] = {}
    first = norm(event("repository_download_operation", 1, project="a/x", ident=5))
    assert project_stage(projects, first, limits()) is NOTHING
    snapshot = dict(projects)
    assert project_stage(projects, norm(event("repository_download_operation", 1, project="a/x", ident=5)),
                         limits()) is DUPLICATE
    assert projects == snapshot


# --- 2. mass download ------------------------------------------------------------------------

def clones(user: int, projects: list[str], start: float = 0, step: float = 10, **kw: Any) -> list[dict[str, Any]]:
    return [event("repository_git_operation", start + step * i, project=p, author=user, ident=f"{user}-{p}-{i}",
                  details=CLONE, **kw) for i, p in enumerate(projects)]


def test_more_than_n_projects_within_the_window_alerts_once() -> None:
    projects = [f"g/p{i:02d}" for i in range(14)]
    _, findings = run(clones(66, projects, name="Mallory"), limits(mass_download_projects=10))
    assert findings == [{
        "kind": "mass_download", "id": "mass_download:66:2025-06-02T09:00:00.000Z",
        "user": {"id": 66, "name": "Mallory"}, "projects": 11, "project_paths": projects[:11],
        "window": {"seconds": 600.0, "start": "2025-06-02T09:00:00.000Z", "end": "2025-06-02T09:01:40.000Z"},
        "limit": 10}]


def test_exactly_n_projects_or_repeats_of_one_project_do_not_alert() -> None:
    _, findings = run(clones(5, [f"g/p{i}" for i in range(10)]))
    assert findings == []
    _, findings = run(clones(5, ["g/same"] * 30))
    assert findings == []


def test_projects_spread_beyond_the_window_do_not_alert() -> None:
    _, findings = run(clones(5, [f"g/p{i}" for i in range(30)], step=70))  # 10 per 630 s at most… 9 in 600 s
    assert findings == []


def test_a_new_window_alerts_again() -> None:
    first = clones(5, [f"g/a{i}" for i in range(11)], start=0)
    second = clones(5, [f"g/b{i}" for i in range(11)], start=700)
    _, findings = run(first + second)
    assert [(f["id"], f["projects"]) for f in findings] == [
        ("mass_download:5:2025-06-02T09:00:00.000Z", 11), ("mass_download:5:2025-06-02T09:11:40.000Z", 11)]


def test_allowlisted_users_and_anonymous_downloads_never_alert() -> None:
    projects = [f"g/p{i}" for i in range(20)]
    _, findings = run(clones(90, projects, name="Backup Bot"), limits(mass_download_allowlist=["90"]))
    assert findings == []
    _, findings = run(clones(91, projects, name="Mirror"), limits(mass_download_allowlist=["Mirror"]))
    assert findings == []
    anonymous = [event("public_repository_download_operation", i, project=p, author=-1, ident=f"a{i}")
                 for i, p in enumerate(projects)]
    engine, findings = run(anonymous)
    assert (findings, engine.actors) == ([], {})


def test_duplicates_do_not_inflate_distinct_projects() -> None:
    events = clones(5, [f"g/p{i}" for i in range(10)])
    _, findings = run(events + events)  # every delivery twice
    assert findings == []


# --- 3. job-token correlation and allowlist gaps ----------------------------------------------

def login(second: float, origin: str, user: int = 7, ip: str = "10.9.9.9", **kw: Any) -> dict[str, Any]:
    return event("user_authenticated_using_job_token", second, project=origin, author=user, ip=ip,
                 ident=f"login-{origin}-{second}", target_type="Ci::Build", target_id=4711, target_details="4711", **kw)


def artifact(second: float, project: str, user: int = 7, ip: str = "10.9.9.9", ident: Any = None,
             **kw: Any) -> dict[str, Any]:
    return event("job_artifact_downloaded", second, project=project, author=user, ip=ip,
                 ident=ident or f"art-{project}-{second}", **kw)


def gap(source: str, target: str, count: int, first: str, last: str, **over: Any) -> dict[str, Any]:
    out = {"kind": "job_token_allowlist_gap", "id": f"job_token_allowlist_gap:{source}>{target}",
           "status": "open", "source_project": source, "target_project": target,
           "user": {"id": 7, "name": "User 7"}, "count": count, "first_seen": first, "last_seen": last,
           "resolved_at": None, "evidence": ["audit_correlation"], "allowlist": "unknown", "inbound_enabled": None,
           "target_visibility": None}
    out.update(over)
    return out


def test_login_then_access_on_another_project_is_a_gap_updated_per_access() -> None:
    events = [login(0, "a/deploy"), artifact(1.5, "a/shared"),
              login(60, "a/deploy"), artifact(61, "a/shared"), artifact(61, "a/shared", ident="art-a/shared-61")]
    _, findings = run(events)
    assert findings == [gap("a/deploy", "a/shared", 1, "2025-06-02T09:00:01.500Z", "2025-06-02T09:00:01.500Z"),
                        gap("a/deploy", "a/shared", 2, "2025-06-02T09:00:01.500Z", "2025-06-02T09:01:01.000Z")]


def test_no_gap_for_the_own_project_other_ip_or_outside_the_window() -> None:
    events = [login(0, "a/deploy"), artifact(1, "a/deploy"),  # its own project
              artifact(2, "a/other", ip="10.1.1.1"),  # another IP
              artifact(6, "a/late")]  # more than 5 s after the login
    _, findings = run(events)
    assert findings == []


def test_an_access_delivered_before_its_login_is_still_found() -> None:
    _, findings = run([artifact(3, "a/shared"), login(2, "a/deploy")])
    assert findings == [gap("a/deploy", "a/shared", 1, "2025-06-02T09:00:03.000Z", "2025-06-02T09:00:03.000Z")]


def test_the_latest_login_before_the_access_is_the_source() -> None:
    _, findings = run([login(0, "a/one"), login(2, "a/two"), artifact(3, "a/shared")])
    assert [f["source_project"] for f in findings] == ["a/two"]


def test_allowlist_from_events_closes_and_reopens_a_gap() -> None:
    added = event("secure_ci_job_token_project_added", 10, project="a/shared", ident=900,
                  details={"custom_message": "Project a/deploy was added to inbound list of allowed projects for "
                                             "a/shared"})
    removed = event("secure_ci_job_token_project_removed", 30, project="a/shared", ident=901,
                    details={"custom_message": "Project a/deploy was removed from inbound list of allowed projects "
                                               "for a/shared"})
    events = [login(0, "a/deploy"), artifact(1, "a/shared"), added,
              login(20, "a/deploy"), artifact(21, "a/shared"), removed,
              login(40, "a/deploy"), artifact(41, "a/shared")]
    engine, findings = run(events)
    first = gap("a/deploy", "a/shared", 1, "2025-06-02T09:00:01.000Z", "2025-06-02T09:00:01.000Z")
    assert findings == [
        first,
        {**first, "status": "resolved", "resolved_at": "2025-06-02T09:00:10.000Z"},
        gap("a/deploy", "a/shared", 1, "2025-06-02T09:00:41.000Z", "2025-06-02T09:00:41.000Z",
            id="job_token_allowlist_gap:a/deploy>a/shared@2025-06-02T09:00:30.000Z", allowlist="events"),
    ]
    assert engine.projects["a/shared"]["allow"]["projects"] == {
        "a/deploy": {"id": None, "changes": [[1748854810.0, 1], [1748854830.0, 0]]}}


def test_ended_gaps_are_forgotten_after_the_dedup_ttl() -> None:
    message = "Project a/deploy was {} inbound list of allowed projects for a/shared"
    change = [event(f"secure_ci_job_token_project_{verb}", second, project="a/shared", ident=f"c{second}",
                    details={"custom_message": message.format(f"{verb} {'to' if verb == 'added' else 'from'}")})
              for verb, second in (("added", 10), ("removed", 30), ("added", 50), ("removed", 2000))]
    events = [login(0, "a/deploy"), artifact(1, "a/shared"), change[0], change[1],
              login(40, "a/deploy"), artifact(41, "a/shared"), change[2], change[3],
              login(2005, "a/deploy"), artifact(2006, "a/shared")]
    engine, findings = run(events)
    # the episodes that ended at 10 and 50 are more than 900 s old at the removal at 2000
    assert list(engine.projects["a/shared"]["gaps"]) == ["a/deploy@2025-06-02T09:33:20.000Z"]
    assert [(f["id"].rsplit("@", 1)[-1], f["status"]) for f in findings] == [
        ("job_token_allowlist_gap:a/deploy>a/shared", "open"),
        ("job_token_allowlist_gap:a/deploy>a/shared", "resolved"),
        ("2025-06-02T09:00:30.000Z", "open"), ("2025-06-02T09:00:30.000Z", "resolved"),
        ("2025-06-02T09:33:20.000Z", "open")]


def test_allowlist_membership_is_judged_at_the_access_time_whatever_the_arrival_order() -> None:
    message = "Project a/deploy was {} inbound list of allowed projects for a/shared"
    added = event("secure_ci_job_token_project_added", 10, project="a/shared", ident=1,
                  details={"custom_message": message.format("added to")})
    removed = event("secure_ci_job_token_project_removed", 30, project="a/shared", ident=2,
                    details={"custom_message": message.format("removed from")})
    accesses = [login(5, "a/deploy"), artifact(6, "a/shared"),  # before the add: a gap
                login(20, "a/deploy"), artifact(21, "a/shared"),  # while allowed: nothing
                login(40, "a/deploy"), artifact(41, "a/shared")]  # after the removal: a new gap
    in_order = run(accesses[:2] + [added] + accesses[2:4] + [removed] + accesses[4:])[1]
    # In the worker an access takes one hop more than the allowlist change next to it:
    changes_first = run([added] + accesses[:2] + [removed] + accesses[2:])[1]
    final = {f["id"]: (f["status"], f["count"], f["resolved_at"]) for f in in_order}
    assert final == {f["id"]: (f["status"], f["count"], f["resolved_at"]) for f in changes_first} == {
        "job_token_allowlist_gap:a/deploy>a/shared": ("resolved", 1, "2025-06-02T09:00:10.000Z"),
        "job_token_allowlist_gap:a/deploy>a/shared@2025-06-02T09:00:30.000Z": ("open", 1, None)}


def test_a_late_add_that_predates_the_access_takes_effect_as_of_its_arrival() -> None:
    added = event("secure_ci_job_token_project_added", 1, project="a/shared", ident=1,
                  details={"custom_message": "Project a/deploy was added to inbound list of allowed projects for "
                                             "a/shared"})
    # within the allowed lateness the add is applied first, in event-time order: no gap at all
    assert run([login(5, "a/deploy"), artifact(6, "a/shared"), added])[1] == []
    # later than that it is late: applied as of the watermark when it arrives (7 s), after the access
    # it arrived after, which was a gap; the gap is resolved then — never before it was seen
    download = event("repository_download_operation", 7, project="a/other", ident="d-7")
    _, findings = run([login(5, "a/deploy"), artifact(6, "a/shared"), download, added], limits(allowed_lateness=0))
    assert [(f["status"], f["first_seen"], f["resolved_at"]) for f in findings] == [
        ("open", "2025-06-02T09:00:06.000Z", None),
        ("resolved", "2025-06-02T09:00:06.000Z", "2025-06-02T09:00:07.000Z")]


def test_a_late_add_after_the_access_resolves_the_gap() -> None:
    added = event("secure_ci_job_token_project_added", 9, project="a/shared", ident=1,
                  details={"custom_message": "Project a/deploy was added to inbound list of allowed projects for "
                                             "a/shared"})
    _, findings = run([login(5, "a/deploy"), artifact(6, "a/shared"), added])
    assert [(f["status"], f["resolved_at"]) for f in findings] == [("open", None),
                                                                   ("resolved", "2025-06-02T09:00:09.000Z")]


def test_group_allowlist_covers_subprojects_only() -> None:
    group_added = event("secure_ci_job_token_group_added", 0, project="a/api", ident=1, target_details="tools",
                        details={"custom_message": "Group a/tools was added to list of allowed groups for a/api"})
    events = [group_added, login(10, "a/tools/lint"), artifact(11, "a/api"),
              login(20, "a/toolsmith"), artifact(21, "a/api")]
    _, findings = run(events)
    assert [(f["source_project"], f["allowlist"]) for f in findings] == [("a/toolsmith", "events")]


def test_snapshot_seeds_projects_groups_and_inbound_setting() -> None:
    snapshot = {"event_type": "sunset_job_token_allowlist_snapshot", "project": "a/lib",
                "taken_at": "2025-06-02T08:00:00Z", "inbound_enabled": True,
                "allowlist": [{"id": 102, "path_with_namespace": "a/app"}],
                "groups_allowlist": [{"id": 7, "web_url": "https://gitlab.example.com/groups/a/tools",
                                      "name": "tools"}]}
    events = [snapshot, login(0, "a/app"), artifact(1, "a/lib"),
              login(10, "a/tools/ci"), artifact(11, "a/lib"),
              login(20, "b/outsider"), artifact(21, "a/lib")]
    engine, findings = run(events)
    assert [(f["source_project"], f["allowlist"], f["inbound_enabled"]) for f in findings] == [
        ("b/outsider", "snapshot", True)]
    assert engine.projects["a/lib"]["allow"] == {
        "projects": {"a/app": {"id": 102, "changes": [[1748851200.0, 2]]}},
        "groups": {"a/tools": {"id": 7, "changes": [[1748851200.0, 2]]}},
        "inbound": [True, 1748851200.0], "source": "snapshot"}


def test_auth_log_rows_are_accesses_without_a_user() -> None:
    row = {"event_type": "sunset_job_token_auth_log", "origin_project": "o/cli", "accessed_project": "a/pay",
           "last_authorized_at": "2025-06-02T09:17:00Z"}
    _, findings = run([row, dict(row)])  # the same row imported twice counts once
    assert findings == [gap("o/cli", "a/pay", 1, "2025-06-02T09:17:00.000Z", "2025-06-02T09:17:00.000Z",
                            user=None, evidence=["auth_log"])]


def test_repeated_access_deliveries_count_once() -> None:
    access = artifact(1, "a/shared", ident=555)
    _, findings = run([login(0, "a/deploy"), access, dict(access)])
    assert [f["count"] for f in findings] == [1]


def test_actor_stage_forwards_accesses_for_the_project_stage() -> None:
    actors: dict[str, Any] = {}
    assert actor_stage(actors, norm(login(0, "a/deploy", entity_id=6307)), limits()) is NOTHING
    result = actor_stage(actors, norm(artifact(1, "a/shared", ident=77, entity_id=3311)), limits())
    assert result.accesses == [{
        "event_type": "sunset_job_token_access", "id": "access:77", "ts": 1748854801.0, "entity_path": "a/shared",
        "pkey": "a/shared", "entity_id": 3311, "origin": "a/deploy", "origin_id": 6307,
        "user": {"id": 7, "name": "User 7"}, "evidence": "audit_correlation", "via": "job_artifact_downloaded"}]


def test_a_users_waiting_list_keeps_only_what_a_later_login_could_claim() -> None:
    """The worker writes a user's value whole at every flush: once the waiting list holds more than
    two events, those more than two correlation windows behind the newest (no later login can claim
    them: a login claims events at or after its own time) leave it; the newest is still claimed."""
    actors: dict[str, Any] = {}
    for second in (0, 60, 120, 180):
        actor_stage(actors, norm(artifact(second, "a/shared", ident=f"a{second}")), limits())
    assert [item[0] - BASE for item in actors["7"]["pending"]] == [120, 180]
    result = actor_stage(actors, norm(login(180, "a/deploy")), limits())
    assert [access["id"] for access in result.accesses] == ["access:a180"]


# --- 4. actor state stays proportional to active users ------------------------------------------

def test_users_idle_past_the_horizon_are_forgotten_at_the_next_sweep() -> None:
    # horizon = max(600 s mass-download window, 4 x 5 s correlation window); a sweep per horizon
    events = [*clones(1, ["g/a"], start=0), *clones(2, ["g/b"], start=300), *clones(3, ["g/c"], start=700),
              *clones(4, ["g/d"], start=1250)]
    engine, _ = run(events)
    # sweeps run on the watermark (newest - 60 s): at 240, releasing the clones at 0 (nothing to
    # drop), and at 1190, releasing those at 700 (cutoff 590: users 1 and 2 go); next due at 1790
    assert (sorted(engine.actors), engine.stats["users_expired"], engine.sweep_at) == (
        ["3", "4"], 2, 1748854800.0 + 1790)


def test_a_sweep_keeps_users_with_recent_logins_or_waiting_events_only() -> None:
    # sweeps run at 0.1 (the first release) and 600.5 (cutoff 0.5), between user 7's login and the
    # access it authenticated; user 9's access waits for the login of the same millisecond, applied
    # after it (event-time ties go by type); users 5 and 8 have only old events
    events = [*clones(5, ["g/x"], start=0), artifact(0, "g/y", user=5), artifact(0.1, "g/y", user=8),
              artifact(0.2, "g/y", user=8), login(599, "a/deploy"),
              artifact(600.5, "a/shared", user=9, ip="10.8.8.8"), login(600.5, "a/build", user=9, ip="10.8.8.8"),
              artifact(601, "a/shared")]
    engine, findings = run(events, limits(allowed_lateness=0))  # the watermark at the newest event
    assert (sorted(engine.actors), engine.stats["users_expired"], engine.stats["late"]) == (["7", "9"], 2, 0)
    assert [(f["source_project"], f["target_project"], f["user"]["id"]) for f in findings] == [
        ("a/build", "a/shared", 9), ("a/deploy", "a/shared", 7)]


def test_a_stream_of_ever_new_users_keeps_only_the_recent_ones() -> None:
    engine = Engine(limits(allowed_lateness=0))  # the watermark at the newest event
    for second in range(10_000):  # a new user every second, each downloading once
        engine.apply(norm(event("repository_download_operation", second, author=100 + second, ident=second)))
    # a release takes the events before the watermark: the first ran at 1 s, so sweeps run at 1, 601,
    # ..., 9601; the last (cutoff 9001) kept users seen from 9001 on, 600 of them, then 398 more came
    # (the last second's event is still held at the watermark)
    assert (len(engine.actors), min(engine.actors, key=int), engine.stats["users_expired"]) == (998, "9101", 9001)


def test_expiry_changes_no_result() -> None:
    """A seeded three-hour stream — bursts of clones, job-token logins with accesses delivered a
    little out of order, users who come back after long pauses — gives the same document with
    and without the sweeps."""
    rng = random.Random(1234)
    raws = []
    for n in range(6000):
        second = n * 1.8 + rng.uniform(-2, 2)  # out-of-order delivery within a few seconds
        user = rng.choice([7, 8, 9]) if rng.random() < 0.2 else rng.randrange(20, 400)
        roll = rng.random()
        if roll < 0.1:
            raws.append(login(second, f"ci/p{rng.randrange(30)}", user=user, ip=f"10.0.{user}.1"))
        elif roll < 0.3:
            raws.append(artifact(second + 1, f"lib/l{rng.randrange(40)}", user=user, ip=f"10.0.{user}.1"))
        else:
            raws += clones(user, [f"g/p{rng.randrange(60)}"], start=second, ip=f"10.0.{user}.1")
    raws += clones(8, [f"g/late{i}" for i in range(12)], start=6000 * 1.8 + 900)  # back after a long pause
    kept = Engine(limits())
    kept.sweep = lambda now: None  # type: ignore[method-assign]  # never forget anybody
    kept_findings = []
    for raw in raws:
        kept_findings += kept.apply(norm(dict(raw)))
    kept_findings += [finding.as_dict() for finding in kept.finish()]
    swept, findings = run(raws)
    assert swept.stats["users_expired"] > 300
    assert findings == kept_findings
    assert {f["kind"] for f in findings} == {"mass_download", "job_token_allowlist_gap"}
    assert {key: value["downloads"] for key, value in swept.projects.items()} == {
        key: value["downloads"] for key, value in kept.projects.items()}
    assert len(swept.actors) < len(kept.actors)


def visibility(second: float, project: str, to: str, **kw: Any) -> dict[str, Any]:
    """GitLab's `project_visibility_level_updated` (Audit::ProjectChangesAuditor)."""
    return event("project_visibility_level_updated", second, project=project, ident=f"vis-{project}-{second}",
                 details={"custom_message": f"Changed visibility_level from Private to {to}",
                          "change": "visibility_level", "from": "Private", "to": to}, **kw)


def clone(second: float, project: str, user: int = 7, ip: str = "10.9.9.9") -> dict[str, Any]:
    return event("repository_git_operation", second, project=project, author=user, ip=ip,
                 ident=f"clone-{project}-{second}", details={"custom_message": {"protocol": "http",
                                                                             "action": "git-upload-pack"}})


def test_a_job_token_reading_artifacts_of_a_public_or_internal_project_needs_no_allowlist() -> None:
    """GitLab's ProjectPolicy lets a job token not on the allowlist read a public or internal project's
    artifacts (and packages, images, releases, environments), nothing else: the artifact download is
    an info finding, the clone a gap; on a private project both are gaps."""
    events = [visibility(0, "a/pub", "Public"), visibility(0, "a/int", "Internal"),
              event("repository_download_operation", 0, project="a/priv", ident="d-priv"),  # private or internal
              login(10, "a/deploy"), artifact(11, "a/pub"), clone(12, "a/pub"),
              login(20, "a/deploy"), artifact(21, "a/int"), artifact(22, "a/priv"), artifact(23, "a/never")]
    _, findings = run(events)
    got = {(f["kind"], f["target_project"], f.get("target_visibility")) for f in findings}
    assert got == {("job_token_public_access", "a/pub", "public"), ("job_token_allowlist_gap", "a/pub", "public"),
                   ("job_token_public_access", "a/int", "internal"),
                   ("job_token_allowlist_gap", "a/priv", "private_or_internal"),
                   ("job_token_allowlist_gap", "a/never", None)}
    info = next(f for f in findings if f["id"] == "job_token_public_access:a/deploy>a/pub")
    assert info == {"kind": "job_token_public_access", "id": "job_token_public_access:a/deploy>a/pub",
                    "severity": "info", "source_project": "a/deploy", "target_project": "a/pub",
                    "target_visibility": "public", "feature": "builds", "via": "job_artifact_downloaded",
                    "user": {"id": 7, "name": "User 7"}, "count": 1, "first_seen": "2025-06-02T09:00:11.000Z",
                    "last_seen": "2025-06-02T09:00:11.000Z"}


def test_visibility_is_judged_at_the_access_time() -> None:
    """Public at the first artifact download, private (a visibility change) at the second: info, then a gap."""
    events = [event("public_repository_download_operation", 0, project="a/x", ident="p-1"),
              login(10, "a/deploy"), artifact(11, "a/x"), visibility(30, "a/x", "Private"),
              login(40, "a/deploy"), artifact(41, "a/x")]
    _, findings = run(events)
    assert [(f["kind"], f["first_seen"]) for f in findings] == [
        ("job_token_public_access", "2025-06-02T09:00:11.000Z"),
        ("job_token_allowlist_gap", "2025-06-02T09:00:41.000Z")]


def test_a_visibility_change_without_its_level_is_a_dead_letter() -> None:
    bad = event("project_visibility_level_updated", 1, ident="v", details={"custom_message": "Changed something"})
    assert normalize(bad) == Rejected("project_visibility_level_updated without its new level")
    from_message = normalize(event("project_visibility_level_updated", 1, ident="w", details={
        "custom_message": "Changed visibility_level from Public to Internal"}))
    assert isinstance(from_message, dict) and from_message["visibility"] == "internal"
