"""A SIGKILL at any point of a stage's batch: a stage restarted from what its changelog kept
applies what it must again exactly as an uninterrupted run does.

A flush writes each changed key of a stage partition (the partition's progress among them, in
set order, which differs between processes) and then its marker. Killed between two of those
writes, the worker restarts with some of the flush's records stored and the previous marker: it
reads the batch's messages again and holds again every event whose key's value does not say it
was applied. Those events must then be applied as they were the first time — at their own time,
in order — and not as late events behind a watermark that a stored progress record of the
unfinished flush had already moved past them. And the project stage must not have released past
what the actor stage applies again (its progress report waits for the flush), or the accesses
forwarded again arrive late and, more than `dedup_ttl` late, are counted again.

Either gives what `test_stream_crash.py[4-keyed-held]` sometimes showed in CI: a job-token gap's
`count` above the replay's after the restart, every tally equal. A worker made to kill itself
inside a flush (that test's input) showed both: a download and the job-token login one second
after it, both applied as of the watermark, made an access the replay does not have; and an
access forwarded again 1,187 s behind the project's watermark was counted twice.

No broker: the app's producer records what it is given (`test_stream_agents.sent`), and the
restart's table is what Faust's recovery makes of the kept records."""

from __future__ import annotations

import asyncio
from itertools import combinations
from pathlib import Path
from typing import Any, NamedTuple

import orjson
import pytest
from streamkit import event
from test_stream_agents import APP, BASE, Sent, new_app, sent_fixture  # noqa: F401 - the `sent` fixture

from streams.audit import ACCESS
from streams.events import Rejected, compact, normalize
from streams.eventtime import actors_report, input_report
from streams.metrics import Metrics
from streams.worker.agents import ActorHandler, Outputs, ProjectHandler
from streams.worker.batching import MARKER_PREFIX, encode_lines, partition_for


class Message(NamedTuple):
    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes


class Delivered(NamedTuple):
    """A stage message as the agent's stream hands it over (`.message`)."""

    message: Message


def record(raw: dict[str, Any], offset: int, index: int) -> dict[str, Any]:
    """An audit event as ingest forwards it: compact, with its source coordinates (input partition 0)."""
    out = normalize(raw)
    assert not isinstance(out, Rejected)
    return {**compact(out), "src": [0, offset, index]}


def messages(topic: str, partition: int, batches: list[tuple[list[dict[str, Any]], float]]) -> list[Delivered]:
    """One stage message per (records, through): the records, then the progress reports that move
    both watermarks just past `through` (a second of `streamkit.at`)."""
    out = []
    for offset, (records, through) in enumerate(batches):
        ts = BASE + through
        reports = [input_report(1, {0: ts}, {0}), actors_report(4, dict.fromkeys(range(4), ts + 1e-6))]
        (value,) = encode_lines([*records, *reports])
        out.append(Delivered(Message(topic, partition, offset, None, value)))
    return out


class Run:
    """A stage handler over a fresh app's table, as a worker process has it."""

    def __init__(self, tmp_path: Path, stage: str, kept: list[tuple[Any, bytes | None]] = ()) -> None:
        app = new_app(tmp_path)
        self.loop = asyncio.new_event_loop()
        self.table = app.tables[stage]
        outputs = Outputs(app.topic("sunset-findings"), app.topic("sunset-dead-letters"), Metrics())
        self.handler = (ProjectHandler(app.sunset_settings, self.table, outputs) if stage == "projects" else
                        ActorHandler(app.sunset_settings, self.table, app.topic(f"{APP}-by-project"), outputs))
        for key, value in kept:  # Faust's recovery: the changelog's records, in order
            if value is None:
                self.table.data.pop(key, None)
            else:
                self.table.data[key] = orjson.loads(value)

    def handle(self, *batches: list[Delivered]) -> None:
        """The batches, in order, on the run's one event loop (a batch's last sends are checked by the next)."""
        for batch in batches:
            self.loop.run_until_complete(self.handler.handle(batch))

    def state(self) -> dict[str, Any]:
        """The table's keys and values as its changelog has them (JSON), but the flush markers."""
        state = {k: v for k, v in self.table.data.items() if not str(k).startswith(MARKER_PREFIX)}
        return orjson.loads(orjson.dumps(state))


def changelog(sends: Sent, since: int, stage: str) -> list[tuple[Any, bytes | None]]:
    return [(k, v) for t, k, v, _ in sends[since:] if t == f"{APP}-{stage}-changelog"]


def forwarded(sends: Sent, since: int = 0) -> set[tuple[str, float, str]]:
    """The distinct accesses sent to the project stage (a repeat of one is deduplicated there)."""
    out = set()
    for topic, _, value, _ in sends[since:]:
        if topic == f"{APP}-by-project":
            for line in value.split(b"\n"):
                item = orjson.loads(line)
                if item["event_type"] == ACCESS:
                    out.add((item["id"], item["ts"] - BASE, item["origin"]))
    return out


def findings(sends: Sent, since: int = 0) -> dict[str, dict[str, Any]]:
    """Each finding's last published state."""
    return {k: orjson.loads(v) for t, k, v, _ in sends[since:] if t == "sunset-findings"}


def kill_points(records: list[tuple[Any, bytes | None]]) -> list[list[tuple[Any, bytes | None]]]:
    """What a kill inside a flush can leave stored of its state records (the marker comes last):
    any of them, since the flush writes its keys in an order that changes from process to process."""
    state, marker = records[:-1], records[-1]
    assert str(marker[0]).startswith(MARKER_PREFIX)
    return [list(kept) for n in range(len(state) + 1) for kept in combinations(state, n)]


def actor_batches(user: int, first_flush: bool) -> list[list[Delivered]]:
    """User 7 logs in with a job token at 1 s and downloads another project's artifact at 3 s (an
    access); at 10 s downloads an artifact, and logs in again at 11 s (no access: the login is
    after the download). Batch 2 applies all four; batch 3 moves the watermark on. `first_flush`:
    batch 1 is empty (no message), batch 2's flush is the partition's first."""
    ip = "10.1.1.1"
    raws = [event("user_authenticated_using_job_token", 1, project="a/deploy", author=user, ip=ip, ident="l1"),
            event("job_artifact_downloaded", 3, project="a/shared", author=user, ip=ip, ident="d3"),
            event("job_artifact_downloaded", 10, project="a/shared", author=user, ip=ip, ident="d10"),
            event("user_authenticated_using_job_token", 11, project="a/deploy", author=user, ip=ip, ident="l11")]
    delivered = messages(f"{APP}-by-actor", partition_for(str(user), 4),
                         [([], 0), ([record(r, 1, n) for n, r in enumerate(raws)], 20), ([], 40)][first_flush:])
    return [[], *([m] for m in delivered)] if first_flush else [[m] for m in delivered]


def project_batches(first_flush: bool) -> list[list[Delivered]]:
    """An access a/deploy -> a/shared at 10 s (a gap: a/deploy not on the allowlist), a/deploy added
    at 20 s (the gap resolved, count 1); batches as `actor_batches`."""
    access = {"event_type": ACCESS, "id": "access:d10", "ts": BASE + 10, "entity_path": "a/shared",
              "pkey": "a/shared", "entity_id": 1, "origin": "a/deploy", "origin_id": None,
              "user": {"id": 7, "name": "User 7"}, "evidence": "audit_correlation", "via": "job_artifact_downloaded"}
    added = event("secure_ci_job_token_project_added", 20, project="a/shared", ident="add20",
                  details={"custom_message": "Project a/deploy was added to inbound list of allowed projects "
                                             "for a/shared"})
    delivered = messages(f"{APP}-by-project", partition_for("a/shared", 4),
                         [([], 0), ([access, record(added, 1, 0)], 30), ([], 40)][first_flush:])
    return [[], *([m] for m in delivered)] if first_flush else [[m] for m in delivered]


@pytest.mark.parametrize("stage", ["actors", "projects"])
@pytest.mark.parametrize("first_flush", [False, True], ids=["after-a-marker", "before-any-marker"])
def test_a_kill_inside_a_flush_changes_nothing_the_restart_applies(tmp_path: Path, sent: Sent, stage: str,
                                                                   first_flush: bool) -> None:
    """Batch 1 is flushed (or there is none: the partition's first flush is the one killed); batch 2
    is killed after any of its flush's records; the restarted stage is handed batch 2 again (not
    committed), then batch 3. Its state and what it sends equal an uninterrupted run's."""
    batches = actor_batches(7, first_flush) if stage == "actors" else project_batches(first_flush)
    reference = Run(tmp_path / "reference", stage)
    reference.handle(*batches)
    expected = (reference.state(), forwarded(sent), findings(sent))
    del sent[:]
    if stage == "actors":
        assert expected[1] == {("access:d3", 3.0, "a/deploy")}
    else:
        (gap,) = expected[2].values()
        assert (gap["status"], gap["count"], gap["resolved_at"]) == ("resolved", 1, "2025-06-02T09:00:20.000Z")

    first = Run(tmp_path / "first", stage)
    start = len(sent)
    first.handle(batches[0])
    flushed = changelog(sent, start, stage)
    before = len(sent)
    first.handle(batches[1])
    killed = sent[before:]  # what the first run sent before the kill: batch 2's forwards and findings
    points = kill_points(changelog(killed, 0, stage))
    assert len(points) == 4  # the partition's progress and the key's value: neither, either, both
    for n, kept in enumerate(points):
        since = len(sent)
        restarted = Run(tmp_path / f"restart-{n}", stage, flushed + kept)
        restarted.handle(batches[1], batches[2])
        again = killed + sent[since:]
        assert (restarted.state(), forwarded(again), findings(again)) == expected, [k for k, _ in kept]


def test_an_actor_partition_killed_anywhere_counts_no_access_twice(tmp_path: Path, sent: Sent) -> None:
    """The actor stage forwards an access, then is killed at any point of its batch's sends — the
    forward, its progress report to the project stage, its flush — and restarted: it applies its
    events again from its last marker and forwards the accesses again. The project stage (not
    killed) counts each access once, as an uninterrupted run does.

    Found in `test_stream_crash.py[4-keyed-held]`: the report went out before the flush, so the
    project partition released the first copy of an access and moved on; the copy the restarted
    actor forwarded came behind its watermark, was applied as of it, and more than `dedup_ttl`
    (900 s) after the first copy, which the project's record of ids had dropped by then: counted
    twice. Here a second access 990 s later makes the record drop the first one."""
    user, ip = 7, "10.1.1.1"
    actor_partition, project_partition = partition_for(str(user), 4), partition_for("a/shared", 4)
    raws = [event("user_authenticated_using_job_token", 8, project="a/deploy", author=user, ip=ip, ident="l8"),
            event("job_artifact_downloaded", 10, project="a/shared", author=user, ip=ip, ident="d10"),
            event("user_authenticated_using_job_token", 998, project="a/deploy", author=user, ip=ip, ident="l998"),
            event("job_artifact_downloaded", 1000, project="a/shared", author=user, ip=ip, ident="d1000")]
    (batch,) = messages(f"{APP}-by-actor", actor_partition, [([record(r, 0, n) for n, r in enumerate(raws)], 1010)])
    # what the project partition has besides the actor partition's sends: the input's progress, and
    # the other actor partitions' (far ahead)
    others = {p: BASE + 2000 for p in range(4) if p != actor_partition}
    (context,) = encode_lines([input_report(1, {0: BASE + 1010}, {0}), actors_report(4, others)])

    def project_after(*actor_sends: Sent) -> dict[str, Any]:
        """The gap a/deploy -> a/shared after the project partition is handed, in order, what
        the actor sends reached the broker with."""
        values = [context] + [v for sends in actor_sends for t, _, v, p in sends
                              if t == f"{APP}-by-project" and p == project_partition]
        project = Run(tmp_path / f"project-{len(sent)}", "projects")
        project.handle(*([Delivered(Message(f"{APP}-by-project", project_partition, n, None, v))] for n, v in
                         enumerate(values)))
        (gap,) = project.state()["a/shared"]["gaps"].values()
        return gap

    reference = Run(tmp_path / "reference", "actors")
    reference.handle([batch])
    whole = list(sent)
    expected = project_after(whole)
    assert (expected["count"], expected["first_ts"], expected["last_ts"]) == (2, BASE + 10, BASE + 1000)
    actors_changelog = f"{APP}-actors-changelog"
    for kill in range(len(whole) + 1):  # the first `kill` sends reached the broker
        reached = whole[:kill]
        since = len(sent)
        restarted = Run(tmp_path / f"restart-{kill}", "actors",
                        [(k, v) for t, k, v, _ in reached if t == actors_changelog])
        restarted.handle([batch])
        gap = project_after(reached, sent[since:])
        assert gap == expected, (kill, [(t, k) for t, k, _, _ in reached])
