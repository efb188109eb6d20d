"""Hostile and unexpected input against the stream: the replay, the worker and the receiver.

Each case here stopped something before (issue 13): an event that crashed the worker on every
restart, a replay that died with a TypeError, receiver answers of 500 and a request that took
gigabytes or never ended. Now each is a dead letter or a 4xx, and the rest goes on.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest
from aiohttp import web
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from streamkit import Worker, broker_fixture, event, limits, produce, read_topic, wait_for  # noqa: F401

from streams import events
from streams.detectors.base import NONE, Base, Event, Result, State
from streams.detectors.registry import DETECTORS, Registry
from streams.dev import EmbeddedBroker, free_port
from streams.receiver import TOKEN_HEADER, receiver_runner
from streams.replay import Engine, replay_lines
from streams.settings import DetectorSettings, StreamSettings, load_settings

from conftest import examples

LOGIN, DOWNLOAD = "user_authenticated_using_job_token", "repository_download_operation"
TOKEN = "s3cret-token"
ROUTED, DEAD = 'sunset_stream_events_total{stage="route"}', "sunset_stream_dead_letters_total"


def crash_events() -> list[dict[str, Any]]:
    """A job-token login, then (same author and IP) an event without `entity_path`, then a download.

    The middle event used to be correlated as an access to project `None`: AttributeError in the
    worker (every restart), TypeError in the replay. It is not an access (no project is named), so
    it is ignored; the download on g/b is the access g/a → g/b.
    """
    middle = event("project_feature_changed", 1, project="g/x", ident="e-2")
    del middle["entity_path"]
    return [event(LOGIN, 0, project="g/a", ident="e-1"), middle, event(DOWNLOAD, 2, project="g/b", ident="e-3")]


def lines(records: Sequence[Any]) -> list[bytes]:
    return [json.dumps(record).encode() + b"\n" for record in records]


@pytest.mark.parametrize("ident", ["²", "-", "9" * 5000, "١٢"])
def test_ids_that_are_not_ascii_decimal_digits_are_no_ids(ident: str) -> None:
    """Found by the hypothesis run below: `'²'.isdigit()` is true and `int('²')` raises."""
    raw = {k: v for k, v in event(DOWNLOAD, 1, ident=1).items() if k != "author_id"}
    out = events.normalize(raw | {"details": {"author_id": ident}})
    assert isinstance(out, events.Rejected) or out["author_id"] is None


def test_an_event_without_entity_path_after_a_login_is_not_an_access() -> None:
    doc = replay_lines(lines(crash_events()), limits())
    assert doc["dead_letters"] == []
    assert [(f["id"], f["first_seen"], f["evidence"]) for f in doc["findings"]] == [
        ("job_token_allowlist_gap:g/a>g/b", "2025-06-02T09:00:02.000Z", ["audit_correlation"])]
    assert doc["downloads"] == {"g/b": {"public_repository_download_operation": 0,
                                        "repository_download_operation": 1}}
    assert (doc["stats"]["events"], doc["stats"]["ignored"]) == (3, 1)


class Exploding(Base):
    """A project detector with a bug: it raises on the event whose id is `boom`."""

    name, stage, reads = "exploding", "project", frozenset({DOWNLOAD})

    def state(self) -> State:
        return {}

    def on_event(self, state: State, event: Event, settings: DetectorSettings) -> Sequence[Result]:
        if event["id"] == "boom":
            raise RuntimeError("detector bug")
        return NONE


def test_an_exception_in_a_detector_is_a_dead_letter_with_its_line_and_the_replay_goes_on() -> None:
    records = [event(DOWNLOAD, 1, project="g/a", ident="a"), event(DOWNLOAD, 2, project="g/a", ident="boom"),
               event(DOWNLOAD, 3, project="g/a", ident="c")]
    doc = replay_lines(lines(records), limits(), registry=Registry([*DETECTORS, Exploding()]))
    assert doc["dead_letters"] == [{"line": 2, "reason": "internal error: RuntimeError: detector bug"}]
    assert doc["stats"]["events"] == 3
    # The tallies ran before the bug raised (the detectors run in list order): the event is counted.
    assert doc["downloads"]["g/a"]["repository_download_operation"] == 3


def test_the_worker_survives_the_event_that_stopped_it(broker: EmbeddedBroker, tmp_path: Path) -> None:
    app = f"hostile-{uuid.uuid4().hex[:6]}"
    worker = Worker(broker, app, tmp_path, partitions=2).start()
    try:
        produce(broker.bootstrap, f"{app}-in", [json.dumps(record).encode() for record in crash_events()])
        gap = "job_token_allowlist_gap:g/a>g/b"
        found = read_topic(broker.bootstrap, f"{app}-findings", lambda r: any(k == gap.encode() for k, _ in r))
        assert [json.loads(value)["source_project"] for key, value in found if key == gap.encode()][-1] == "g/a"
        produce(broker.bootstrap, f"{app}-in", [json.dumps(event(DOWNLOAD, 5, project="g/c", ident="e-4")).encode()])
        wait_for("the fourth event routed", lambda: worker._alive() and worker.metric(ROUTED) == 4)
        assert worker.metric(DEAD) == 0
    finally:
        worker.stop()


# Values a GitLab body could carry, and values it should not: every JSON type, odd strings.
_scalars = (st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False, allow_infinity=False)
            | st.text(max_size=12))
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                                             max_size=3), max_leaves=8)
_fields = ["id", "event_type", "author_id", "author_name", "ip_address", "entity_type", "entity_path", "entity_id",
           "created_at", "target_id", "target_details", "details", "event_name", "origin_project",
           "accessed_project", "last_authorized_at", "project", "allowlist", "groups_allowlist", "inbound_enabled"]
_types = st.sampled_from([LOGIN, DOWNLOAD, "public_repository_download_operation", "repository_git_operation",
                          "sunset_job_token_auth_log", "sunset_job_token_allowlist_snapshot",
                          "sunset_job_token_access", "inbound_job_token_scope_added", "project_feature_changed"])
_times = st.sampled_from(["2025-06-02T09:00:00Z", "2025-06-02T09:00:01.5+02:00", "", "yesterday", "9999-99-99"])
_events = st.fixed_dictionaries({}, optional={
    "event_type": _types | _values, "created_at": _times | _values, "author_id": st.integers(-3, 9) | _values,
    "ip_address": st.sampled_from(["10.0.0.1", "10.0.0.2"]) | _values, "entity_type": st.just("Project") | _values,
    "entity_path": st.sampled_from(["g/a", "g/b"]) | _values, "id": st.text(max_size=3) | _values,
    "details": st.dictionaries(st.sampled_from(_fields + ["custom_message"]), _values, max_size=4) | _values,
    **{name: _values for name in _fields[7:]}})


@settings(max_examples=examples(600), deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_events | _values, max_size=8))
def test_normalize_and_the_engine_take_any_json(raws: list[Any]) -> None:
    """Whatever the body, `normalize` gives an event or a reason, and the engine takes the events."""
    engine = Engine(limits(correlation_window=5.0))
    encoded = [json.dumps(raw).encode() for raw in raws]
    for line in encoded:
        try:
            raw = orjson.loads(line)
        except orjson.JSONDecodeError:  # lone surrogates: the replay's and the receiver's dead letter
            continue
        out = events.normalize(raw)
        assert isinstance(out, (dict, events.Rejected))
        if isinstance(out, dict):
            engine.step(out)
    doc = replay_lines([line + b"\n" for line in encoded], limits())
    assert doc["stats"]["lines"] == len(raws)
    assert all(not d["reason"].startswith("internal error") for d in doc["dead_letters"]), doc["dead_letters"]


# The receiver.

def receiver_settings(url: str, **over: Any) -> StreamSettings:
    name = f"rxh-{uuid.uuid4().hex[:8]}"
    return load_settings("dev", broker=url, token=TOKEN, input_topic=f"{name}-in", dead_letter_topic=f"{name}-dead",
                         findings_topic=f"{name}-findings", partitions=1, publish_timeout=3.0, **over)


async def raw_request(port: int, head: bytes, body: bytes = b"", drip: float = 0.0) -> bytes:
    """A hand-written HTTP/1.1 request (headers that aiohttp's client would refuse to send), the
    body at once or a byte every `drip` seconds; the raw answer (b"": closed without one)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    answer = asyncio.ensure_future(reader.read())
    try:
        writer.write(head)
        if not drip:
            writer.write(body)
        for byte in body if drip else b"":
            if answer.done():
                break
            writer.write(bytes([byte]))
            await writer.drain()
            await asyncio.sleep(drip)
        await writer.drain()
    except (ConnectionResetError, BrokenPipeError):
        pass
    try:
        return await asyncio.wait_for(answer, timeout=30)
    except ConnectionResetError:
        return b""
    finally:
        writer.close()


def post_head(length: int, token: bytes = TOKEN.encode()) -> bytes:
    return (b"POST /audit-events HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + TOKEN_HEADER.encode() + b": "
            + token + b"\r\nContent-Length: " + str(length).encode() + b"\r\n\r\n")


def status_and_body(answer: bytes) -> tuple[int, Any]:
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split(b" ")[1]), json.loads(body)


def serve_and(settings_: StreamSettings, scenario: Any, ready: bool = True) -> Any:
    """Run the receiver, wait until its broker is there (unless not `ready`: a scenario that never
    publishes), and run `scenario(port)`."""
    async def main() -> Any:
        runner = receiver_runner(settings_)
        await runner.setup()
        port = free_port()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        try:
            async with aiohttp.ClientSession() as session:
                for _ in range(300 if ready else 0):
                    async with session.get(f"http://127.0.0.1:{port}/health") as response:
                        if response.status == 200:
                            break
                    await asyncio.sleep(0.1)
            return await scenario(port)
        finally:
            await runner.cleanup()

    return asyncio.run(main())


def test_receiver_refuses_hostile_bodies_with_4xx_and_dead_letters_them(broker: EmbeddedBroker) -> None:
    conf = receiver_settings(broker.url, max_events_per_request=100)
    surrogate = b'{"event_type": "x", "entity_path": "\\ud800"}'
    deep = b"[" * 100_000 + b"]" * 100_000
    deep_out = b'{"event_type": "x", "a": ' + b"[" * 300 + b"]" * 300 + b"}"  # parses, cannot be re-encoded
    bomb = b"[" + b"{}," * (25 * 1024 * 1024 // 3 - 1) + b"{}]"
    many = json.dumps([{"event_type": "x"}] * 101).encode()

    async def scenario(port: int) -> list[tuple[int, Any]]:
        answers = []
        for body in (surrogate, deep, deep_out, bomb, many):
            answers.append(status_and_body(await raw_request(port, post_head(len(body)), body)))
        answers.append(status_and_body(await raw_request(port, post_head(2, token=b"\xff\xfe"), b"{}")))
        return answers

    got = serve_and(conf, scenario)
    assert [status for status, _ in got] == [400, 400, 400, 413, 413, 401]
    assert got[0][1]["error"].startswith("invalid JSON: no low surrogate in string")
    assert got[1][1]["error"].startswith("invalid JSON: depth limit exceeded")
    assert got[2][1]["error"].startswith("cannot re-encode an event: ")
    assert got[3][1] == {"error": "body has more than 250000 JSON values"}
    assert got[4][1] == {"error": "more than 100 events in one body"}
    assert got[5][1] == {"error": f"invalid or missing {TOKEN_HEADER}"}
    dead = read_topic(conf.kafka_bootstrap(), conf.dead_letter_topic, lambda r: len(r) >= 3)
    reasons = sorted(json.loads(value)["reason"].split(":")[0] for _, value in dead)
    assert reasons == ["cannot re-encode an event", "invalid JSON", "invalid JSON"]


def test_receiver_times_out_slow_headers_and_slow_bodies(broker: EmbeddedBroker) -> None:
    conf = receiver_settings(broker.url, header_timeout=1.0, body_timeout=1.0)
    body = json.dumps(event(DOWNLOAD, 1, ident=1)).encode()

    async def scenario(port: int) -> list[bytes]:
        # Headers dripped a byte every 0.2 s (~20 s to finish): closed after the header timeout.
        slow_head = raw_request(port, b"", post_head(len(body)) + body, drip=0.2)
        # Headers at once, body a byte every 0.2 s: 408 once the body timeout passes.
        slow_body = raw_request(port, post_head(len(body)), body, drip=0.2)
        return list(await asyncio.gather(slow_head, slow_body))

    head_answer, body_answer = serve_and(conf, scenario)
    assert head_answer == b""
    assert status_and_body(body_answer) == (408, {"error": "body not received within 1 s"})
