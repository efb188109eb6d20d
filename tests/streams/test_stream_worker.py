"""The real worker against the embedded broker: the sample stream in, findings and tallies out;
and the crash test — SIGKILL mid-stream, restart, every distinct event counted exactly once."""

from __future__ import annotations

import asyncio
import collections
import json
import random
import time
from collections.abc import Iterator
from math import inf, nextafter
from pathlib import Path
from typing import Any

import pytest
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from streamkit import (  # noqa: F401 - the `broker` fixture
    SAMPLE,
    SNAPSHOT,
    Worker,
    broker_fixture,
    get_json,
    limits,
    produce,
    read_topic,
    sample_values,
    try_json,
    wait_for,
)

from streams.dev import EmbeddedBroker
from streams.events import load_snapshot, normalize
from streams.replay import replay_file


def create_topic(bootstrap: str, name: str, partitions: int) -> None:
    async def run() -> None:
        admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
        await admin.start()
        try:
            await admin.create_topics([NewTopic(name, partitions, 1)])
        finally:
            await admin.close()

    asyncio.run(run())


def json_lines(path: Path) -> list[Any]:
    """The JSON values of a file's lines (the ones that parse; arrays flattened)."""
    out: list[Any] = []
    for line in path.read_bytes().splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        out += value if isinstance(value, list) else [value]
    return out


def latest(records: list[tuple[bytes | None, bytes]]) -> dict[str, dict[str, Any]]:
    """The findings topic read as a table: the last record per finding id (its key)."""
    return {key.decode(): json.loads(value) for key, value in records if key is not None}


@pytest.fixture(scope="module")
def sample_run(broker: EmbeddedBroker, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The sample stream (snapshot first) through a worker; one input partition keeps the file's order."""
    worker = Worker(broker, "sample", tmp_path_factory.mktemp("worker-sample"),
                    SUNSET_MASS_DOWNLOAD_ALLOWLIST='["90"]')
    create_topic(broker.bootstrap, "sample-in", 1)
    worker.start()
    try:
        messages = [json.dumps(r).encode() for r in load_snapshot(SNAPSHOT)]
        messages += [line.rstrip(b"\n") for line in SAMPLE.read_bytes().splitlines(keepends=True) if line.strip()]
        produce(broker.bootstrap, "sample-in", messages)
        expected = replay_file(SAMPLE, limits(mass_download_allowlist=["90"]), load_snapshot(SNAPSHOT))
        final = {f["id"]: f for f in expected["findings"]}
        findings = read_topic(broker.bootstrap, "sample-findings", lambda r: latest(r) == final)
        yield {"worker": worker, "expected": expected, "findings": findings, "sent": len(messages)}
    finally:
        worker.stop()


def test_findings_on_the_topic_equal_the_replay(sample_run: dict[str, Any]) -> None:
    expected = {f["id"]: f for f in sample_run["expected"]["findings"]}
    assert latest(sample_run["findings"]) == expected
    keys = [key.decode() for key, _ in sample_run["findings"] if key is not None]
    gap = "job_token_allowlist_gap:acme/deploy>acme/shared-artifacts"
    assert keys.count("mass_download:66:2025-06-02T09:01:40.000Z") == 1  # once per window, not per event
    assert [json.loads(v)["status"] for k, v in sample_run["findings"] if k == gap.encode()][-1] == "resolved"


def test_views_show_tallies_and_open_findings(sample_run: dict[str, Any]) -> None:
    worker: Worker = sample_run["worker"]
    expected = sample_run["expected"]
    assert wait_for("tallies", lambda: get_json(worker.url + "/tallies") == expected["downloads"] or None)
    assert get_json(worker.url + "/tallies?project=oss/cli") == {"oss/cli": expected["downloads"]["oss/cli"]}
    open_ids = [f["id"] for f in get_json(worker.url + "/findings")]
    assert open_ids == [
        "job_token_allowlist_gap:acme/app>acme/lib@2025-06-02T09:15:00.000Z",
        "job_token_allowlist_gap:acme/deploy>acme/website",
        "job_token_allowlist_gap:oss/cli>acme/payments",
        "mass_download:66:2025-06-02T09:01:40.000Z",
        "visibility_changed:acme/website",
    ]
    health = get_json(worker.url + "/health")
    assert (health["status"], health["app"]) == ("ok", "sample")
    # the input read to its end and idle; every stage partition's watermark just above the newest
    # event time read (a release takes what is before its watermark)
    assert worker.metric('sunset_stream_input_lag_messages{partition="0"}') == 0
    newest = max(e["ts"] for e in map(normalize, json_lines(SAMPLE)) if isinstance(e, dict) and e["ts"])
    assert {worker.metric(f'sunset_stream_watermark_seconds{{partition="{p}",stage="{stage}"}}')
            for stage in ("actors", "projects") for p in range(4)} == {nextafter(newest, inf)}
    assert get_json(worker.url + "/ready") == {"ready": True, "recovered": True, "rebalancing": False, "assigned": True}


def test_bad_events_are_on_the_dead_letter_topic(sample_run: dict[str, Any]) -> None:
    records = read_topic(sample_run["worker"].env["SUNSET_BROKER"].split("://")[1], "sample-dead",
                         lambda r: len(r) >= 2)
    dead = sorted((json.loads(value) for _, value in records), key=lambda d: d["offset"])
    # Two snapshot records come first on the input topic: sample line n is offset n + 1.
    assert [(d["topic"], d["offset"], d["reason"].split(":")[0]) for d in dead] == [
        ("sample-in", 61, "invalid JSON"), ("sample-in", 62, "missing event_type")]
    assert dead[1]["payload"] == json.dumps({"id": 9998, "entity_path": "acme/app",
                                             "created_at": "2025-06-02T09:16:50.000Z"})
    metrics = sample_run["worker"]
    assert metrics.metric('sunset_stream_dead_letters_total{reason="invalid JSON"}') == 1
    assert metrics.metric('sunset_stream_dead_letters_total{reason="missing event_type"}') == 1


def test_metrics_of_the_sample_run(sample_run: dict[str, Any]) -> None:
    """`/metrics` of the running worker, parsed by prometheus_client: what the input and the
    replay fix exactly (stage batching varies from run to run, so batch and message counts of the
    stages are not asserted)."""
    worker: Worker = sample_run["worker"]
    stats = sample_run["expected"]["stats"]
    newest = max(e["ts"] for e in map(normalize, json_lines(SAMPLE)) if isinstance(e, dict) and e["ts"])
    before = time.time()
    families = worker.metrics()
    after = time.time()
    values = sample_values(families)
    fixed = {name: values.get(name) for name in [
        'sunset_stream_messages_total{stage="route"}', 'sunset_stream_events_total{stage="route"}',
        'sunset_stream_dead_letters_total{reason="invalid JSON"}',
        'sunset_stream_dead_letters_total{reason="missing event_type"}',
        'sunset_stream_duplicates_total{stage="projects"}', 'sunset_stream_duplicates_total{stage="actors"}',
        'sunset_stream_late_events_total{stage="projects"}', 'sunset_stream_late_events_total{stage="actors"}',
        'sunset_stream_redelivered_total{stage="projects"}', 'sunset_stream_redelivered_total{stage="actors"}',
        'sunset_stream_refetched_total{stage="projects"}', 'sunset_stream_refetched_total{stage="actors"}',
        "sunset_stream_users_expired_total", 'sunset_stream_input_lag_messages{partition="0"}',
        'sunset_stream_held_events{stage="projects"}', 'sunset_stream_held_events{stage="actors"}',
        "sunset_stream_projects", "sunset_stream_users"]}
    assert fixed == {
        'sunset_stream_messages_total{stage="route"}': sample_run["sent"],
        'sunset_stream_events_total{stage="route"}': stats["events"],
        'sunset_stream_dead_letters_total{reason="invalid JSON"}': 1,
        'sunset_stream_dead_letters_total{reason="missing event_type"}': 1,
        'sunset_stream_duplicates_total{stage="projects"}': stats["duplicates"],
        'sunset_stream_duplicates_total{stage="actors"}': 0,
        'sunset_stream_late_events_total{stage="projects"}': 0, 'sunset_stream_late_events_total{stage="actors"}': 0,
        'sunset_stream_redelivered_total{stage="projects"}': 0, 'sunset_stream_redelivered_total{stage="actors"}': 0,
        'sunset_stream_refetched_total{stage="projects"}': 0, 'sunset_stream_refetched_total{stage="actors"}': 0,
        "sunset_stream_users_expired_total": stats["users_expired"],
        'sunset_stream_input_lag_messages{partition="0"}': 0,
        'sunset_stream_held_events{stage="projects"}': 0, 'sunset_stream_held_events{stage="actors"}': 0,
        "sunset_stream_projects": stats["projects"], "sunset_stream_users": stats["users"]}
    # every record a stage topic got was applied by its stage
    for stage in ("projects", "actors"):
        assert values[f'sunset_stream_events_total{{stage="{stage}"}}'] == \
            values[f'sunset_stream_forwarded_total{{topic="sample-by-{stage[:-1]}"}}']
    # the findings counted are the records on the findings topic, by kind
    published = {name: value for name, value in values.items() if name.startswith("sunset_stream_findings_total")}
    records = read_topic(worker.env["SUNSET_BROKER"].split("://")[1], "sample-findings",
                         lambda r: len(r) >= sum(published.values()))
    kinds = collections.Counter(json.loads(value)["kind"] for _, value in records)
    assert published == {f'sunset_stream_findings_total{{kind="{kind}"}}': n for kind, n in kinds.items()}
    # event-time lag: wall clock at the scrape minus each stage partition's watermark (the newest event)
    lags = {name: value for name, value in values.items() if name.startswith("sunset_stream_event_time_lag_seconds")}
    assert sorted(lags) == sorted(f'sunset_stream_event_time_lag_seconds{{partition="{p}",stage="{stage}"}}'
                                  for stage in ("actors", "projects") for p in range(4))
    assert all(before - newest <= lag <= after - newest for lag in lags.values())
    assert (families["sunset_stream_input_lag_messages"]["type"],
            families["sunset_stream_event_time_lag_seconds"]["type"]) == ("gauge", "gauge")


def crash_stream(n_projects: int = 40, per_project: int = 500, seed: int = 11) -> tuple[list[bytes], dict[str, Any]]:
    """Downloads with ~10 % repeated deliveries, shuffled; and the tallies of distinct ids."""
    rng = random.Random(seed)
    events, tallies = [], {}
    for p in range(n_projects):
        path = f"crash/p{p:02d}"
        counts = {"repository_download_operation": 0, "public_repository_download_operation": 0}
        for i in range(per_project):
            kind = "repository_download_operation" if p % 3 else "public_repository_download_operation"
            counts[kind] += 1
            body = {"id": f"{p}-{i}", "event_type": kind, "entity_path": path, "entity_type": "Project",
                    "author_id": 100 + (i % 50), "author_name": "User", "ip_address": f"10.0.{p}.{i % 200}",
                    "created_at": f"2025-06-02T09:{i // 60 % 60:02d}:{i % 60:02d}.000Z"}
            events.append(json.dumps(body).encode())
            if rng.random() < 0.1:
                events.append(json.dumps(body).encode())
        tallies[path] = counts
    rng.shuffle(events)
    return events, tallies


def test_sigkill_mid_stream_loses_nothing_and_counts_nothing_twice(
        broker: EmbeddedBroker, tmp_path: Path) -> None:
    events, expected = crash_stream()
    head, tail = events[:8000], events[8000:]
    create_topic(broker.bootstrap, "crash-in", 4)
    produce(broker.bootstrap, "crash-in", head)
    settings = {"SUNSET_BROKER_COMMIT_INTERVAL": "0.2", "SUNSET_BATCH_SIZE": "500"}
    first = Worker(broker, "crash", tmp_path / "first", **settings)
    first.start()
    try:
        wait_for("some events counted", lambda: first.metric('sunset_stream_events_total{stage="projects"}') >= 2000,
                 every=0.02)
    finally:
        first.kill()  # SIGKILL: no shutdown, no last commit, no flush
    produce(broker.bootstrap, "crash-in", tail)  # the stream goes on while the worker is down
    second = Worker(broker, "crash", tmp_path / "second", **settings).start()
    try:
        tallies = wait_for("the tallies to reach the number of distinct events",
                           lambda: (t := try_json(second.url + "/tallies")) == expected and t, every=0.5)
        assert tallies == expected
        # The restart resumed from committed offsets on recovered state; it did not start over.
        assert second.metric('sunset_stream_messages_total{stage="route"}') < len(events)
        again = read_topic(broker.bootstrap, "crash-dead", lambda r: True, timeout=5)
        assert again == []
    finally:
        second.stop()


def test_idle_users_leave_the_actors_table_for_good(broker: EmbeddedBroker, tmp_path: Path) -> None:
    """Actor state is bounded by active users: an idle user is tombstoned, and a restarted
    worker's recovered table does not bring them back."""
    def clone(author: int, second: int) -> bytes:
        return json.dumps({"id": f"c{author}-{second}", "event_type": "repository_git_operation",
                           "entity_path": f"g/p{author}", "entity_type": "Project", "entity_id": author,
                           "author_id": author, "author_name": f"User {author}", "ip_address": "10.0.0.1",
                           "created_at": f"2025-06-02T09:{second // 60:02d}:{second % 60:02d}.000Z",
                           "details": {"custom_message": {"action": "git-upload-pack"}}}).encode()

    settings = {"SUNSET_MASS_DOWNLOAD_WINDOW": "60"}  # horizon: max(60 s, 4 x 5 s)
    create_topic(broker.bootstrap, "idle-in", 1)
    first = Worker(broker, "idle", tmp_path / "first", partitions=1, **settings).start()
    try:
        produce(broker.bootstrap, "idle-in", [clone(1, 0)])
        wait_for("user 1", lambda: first.metric("sunset_stream_users") == 1)
        produce(broker.bootstrap, "idle-in", [clone(2, 200)])  # user 1 has been idle for 200 s
        wait_for("the sweep", lambda: first.metric("sunset_stream_users_expired_total") == 1)
        # user 2 enters the table once the watermark releases their event (held in memory until then)
        wait_for("user 2 alone", lambda: first.metric("sunset_stream_users") == 1)
    finally:
        first.stop()
    second = Worker(broker, "idle", tmp_path / "second", partitions=1, **settings).start()
    try:
        # an event late enough that user 1, were it recovered, would not be swept again
        produce(broker.bootstrap, "idle-in", [clone(3, 30)])
        wait_for("users 2 and 3", lambda: second.metric('sunset_stream_events_total{stage="actors"}') == 1)
        assert (second.metric("sunset_stream_users"), second.metric("sunset_stream_users_expired_total")) == (2, 0)
    finally:
        second.stop()


def test_an_event_of_two_mib_is_counted_and_one_that_is_bad_is_dead_lettered_whole(
        broker: EmbeddedBroker, tmp_path: Path) -> None:
    """Topics, producers and consumers follow the receiver's body cap (25 MiB), not Kafka's 1 MB default."""
    padding = "x" * (2 * 1024 * 1024)
    big = {"id": "big-1", "event_type": "repository_download_operation", "entity_path": "big/repo",
           "entity_type": "Project", "author_id": 5, "author_name": "User 5", "ip_address": "10.0.0.5",
           "created_at": "2025-06-02T09:00:00.000Z", "details": {"custom_message": padding}}
    bad = {key: value for key, value in big.items() if key != "event_type"}
    create_topic(broker.bootstrap, "large-in", 1)
    produce(broker.bootstrap, "large-in", [json.dumps(big).encode(), json.dumps(bad).encode()])
    worker = Worker(broker, "large", tmp_path).start()
    try:
        tallies = wait_for("the large download counted", lambda: try_json(worker.url + "/tallies") or None)
        assert tallies == {"big/repo": {"repository_download_operation": 1, "public_repository_download_operation": 0}}
        (dead,) = [json.loads(v) for _, v in read_topic(broker.bootstrap, "large-dead", lambda r: len(r) >= 1)]
        assert (dead["reason"], json.loads(dead["payload"])) == ("missing event_type", bad)
    finally:
        worker.stop()
