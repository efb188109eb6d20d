"""A silent input is not a late one: an input partition that falls silent for longer than the
idle time lets the watermark move up to its newest event (so the last findings come out), and
when it comes back with newer events, the results are still the replay's."""

from __future__ import annotations

import json
from typing import Any

from streamgen import generate, snapshot
from streamkit import (  # noqa: F401 - the `broker` and `run_worker` fixtures
    broker_fixture,
    limits,
    produce,
    run_worker_fixture,
    wait_for,
    worker_results,
)
from test_stream_worker import create_topic

from streams.audit import parse_time
from streams.dev import EmbeddedBroker
from streams.events import snapshot_records
from streams.replay import replay_lines


def test_an_input_that_pauses_past_the_idle_time_gives_the_replays_results(
        broker: EmbeddedBroker, run_worker: Any) -> None:
    seed = [json.dumps(record).encode() for record in snapshot_records(snapshot())]
    lines = sorted(generate(14), key=lambda line: parse_time(json.loads(line).get("created_at")) or 0.0)
    doc = replay_lines([line + b"\n" for line in lines], limits(), snapshot_records(snapshot()))
    app = "idle-pause"
    create_topic(broker.bootstrap, f"{app}-in", 1)
    half = len(lines) // 2
    newest = max(parse_time(json.loads(line).get("created_at")) or 0.0 for line in lines[:half])
    produce(broker.bootstrap, f"{app}-in", seed + lines[:half])
    worker = run_worker(app)
    # Idle: the watermark passes the first half's newest event (not only newest - lateness).
    wait_for("the idle input to release its newest event", lambda: all(
        worker.metric(f'sunset_stream_watermark_seconds{{partition="{p}",stage="projects"}}') > newest
        for p in range(4)))
    produce(broker.bootstrap, f"{app}-in", lines[half:])
    found = worker_results(worker, broker, app, doc)
    expected = {f["id"]: f for f in doc["findings"]}
    assert sorted(set(found["findings"]) ^ set(expected)) == []
    assert [found["findings"][k] for k in sorted(expected)] == [expected[k] for k in sorted(expected)]
    assert found["tallies"] == doc["downloads"]
