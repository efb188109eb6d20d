"""The receiver over real HTTP, publishing to the real (embedded) broker."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from streamkit import broker_fixture, event, parse_metrics, read_topic, sample_values  # noqa: F401 - `broker`

from streams.dev import EmbeddedBroker, free_port
from streams.receiver import TOKEN_HEADER, TYPE_HEADER, receiver_runner
from streams.settings import StreamSettings, load_settings

TOKEN = "s3cret-token"
FORM = "application/x-www-form-urlencoded"  # what GitLab documents, although the body is JSON


def settings_for(url: str, **over: Any) -> StreamSettings:
    name = f"rx-{uuid.uuid4().hex[:8]}"
    return load_settings("dev", broker=url, token=TOKEN, input_topic=f"{name}-in", dead_letter_topic=f"{name}-dead",
                         findings_topic=f"{name}-findings", partitions=2, publish_timeout=3.0, **over)


@asynccontextmanager
async def serving(settings: StreamSettings) -> AsyncIterator[tuple[str, aiohttp.ClientSession]]:
    runner = receiver_runner(settings)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        async with aiohttp.ClientSession() as session:
            yield f"http://127.0.0.1:{port}", session
    finally:
        await runner.cleanup()


async def ready(base: str, session: aiohttp.ClientSession, want: int = 200) -> None:
    for _ in range(300):
        async with session.get(base + "/health") as response:
            if response.status == want:
                return
        await asyncio.sleep(0.1)
    raise AssertionError(f"/health never answered {want}")


async def post(session: aiohttp.ClientSession, base: str, body: bytes, token: str | None = TOKEN,
               **headers: str) -> tuple[int, Any]:
    if token is not None:
        headers[TOKEN_HEADER] = token
    async with session.post(base + "/audit-events", data=body, headers={"Content-Type": FORM, **headers}) as response:
        return response.status, await response.json()


def run(settings: StreamSettings, scenario: Callable[[str, aiohttp.ClientSession], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        async with serving(settings) as (base, session):
            await ready(base, session)
            return await scenario(base, session)

    return asyncio.run(main())


def test_events_are_published_before_the_2xx(broker: EmbeddedBroker) -> None:
    settings = settings_for(broker.url)
    one = event("repository_download_operation", 1, project="acme/app", ident=1)
    two = [event("public_repository_download_operation", 2, project="oss/cli", ident="u-2"),
           event("public_repository_download_operation", 3, project="oss/cli", ident="u-3")]
    bare = {k: v for k, v in event("repository_download_operation", 4, ident=4).items() if k != "event_type"}

    async def scenario(base: str, session: aiohttp.ClientSession) -> list[Any]:
        return [await post(session, base, json.dumps(one).encode()),
                await post(session, base, json.dumps(two).encode()),
                await post(session, base, json.dumps(bare).encode(), **{TYPE_HEADER: "repository_download_operation"})]

    assert run(settings, scenario) == [(200, {"accepted": 1, "dead_letters": 0}),
                                       (200, {"accepted": 2, "dead_letters": 0}),
                                       (200, {"accepted": 1, "dead_letters": 0})]
    records = read_topic(settings.kafka_bootstrap(), settings.input_topic, lambda r: len(r) >= 4)
    by_id = {json.loads(v)["id"]: (k, json.loads(v)) for k, v in records}
    assert sorted(by_id, key=str) == [1, 4, "u-2", "u-3"]
    assert by_id[1] == (b"acme/app", one)
    assert by_id[4][1]["event_type"] == "repository_download_operation"  # from X-Gitlab-Audit-Event-Type


def test_token_size_and_json_are_checked(broker: EmbeddedBroker) -> None:
    settings = settings_for(broker.url, max_body_bytes=2048)
    ok = json.dumps(event("repository_download_operation", 1, ident=1)).encode()

    async def chunked() -> AsyncIterator[bytes]:
        for _ in range(10):
            yield b" " * 1000  # no Content-Length: the cap applies while reading

    async def scenario(base: str, session: aiohttp.ClientSession) -> list[Any]:
        async with session.post(base + "/audit-events", data=chunked(), headers={TOKEN_HEADER: TOKEN}) as response:
            streamed = (response.status, await response.json())
        return [await post(session, base, ok, token=None),
                await post(session, base, ok, token="s3cret-tokeN"),
                await post(session, base, b" " * 3000),
                streamed,
                await post(session, base, b'{"event_type": '),
                await post(session, base, b"42")]

    statuses = run(settings, scenario)
    assert [s for s, _ in statuses] == [401, 401, 413, 413, 400, 400]
    assert statuses[0][1] == {"error": f"invalid or missing {TOKEN_HEADER}"}
    assert statuses[2][1] == {"error": "body larger than 2048 bytes"}
    assert statuses[5][1] == {"error": "expected a JSON object or an array of objects"}
    dead = read_topic(settings.kafka_bootstrap(), settings.dead_letter_topic, lambda r: len(r) >= 2)
    assert sorted((json.loads(v)["reason"].split(":")[0], json.loads(v)["payload"]) for _, v in dead) == [
        ("invalid JSON", '{"event_type": '), ("not a JSON object or array", "42")]


@pytest.mark.integration
def test_broker_unreachable_is_503(tmp_path: Path) -> None:
    settings = settings_for(f"kafka://127.0.0.1:{free_port()}")  # nothing listens there

    async def scenario(base: str, session: aiohttp.ClientSession) -> Any:
        await ready(base, session, want=503)
        return await post(session, base, json.dumps(event("repository_download_operation", 1, ident=1)).encode())

    async def main() -> Any:
        async with serving(settings) as (base, session):
            return await scenario(base, session)

    status, body = asyncio.run(main())
    assert (status, body) == (503, {"error": "broker unavailable: not connected"})


@pytest.mark.integration
def test_broker_going_down_is_503(tmp_path: Path) -> None:
    own = EmbeddedBroker(log_path=tmp_path / "tansu.log").start()  # this test kills its own broker
    settings = settings_for(own.url)
    body = json.dumps(event("repository_download_operation", 1, ident=1)).encode()

    async def scenario(base: str, session: aiohttp.ClientSession) -> list[Any]:
        before = await post(session, base, body)
        own.stop()
        after = await post(session, base, body)
        async with session.get(base + "/metrics") as response:
            metrics = await response.text()
        return [before, after, metrics]

    try:
        before, after, metrics = run(settings, scenario)
    finally:
        own.stop()
    assert before == (200, {"accepted": 1, "dead_letters": 0})
    assert after[0] == 503 and after[1]["error"] in (  # never the client's text of an exception
        "broker unavailable: no acknowledgement in time", "broker unavailable: KafkaConnectionError",
        "broker unavailable: KafkaTimeoutError", "broker unavailable: RequestTimedOutError")
    assert sample_values(parse_metrics(metrics)) == {
        'sunset_receiver_requests_total{code="200"}': 1, 'sunset_receiver_requests_total{code="503"}': 1,
        "sunset_receiver_events_total": 1, "sunset_receiver_bytes_total": len(body)}


def test_metrics_count_requests_events_bytes_and_bad_bodies(broker: EmbeddedBroker) -> None:
    """`/metrics` of a running receiver, parsed by prometheus_client: exact samples, help and types."""
    settings = settings_for(broker.url)
    one = json.dumps(event("repository_download_operation", 1, project="acme/app", ident=1)).encode()
    two = json.dumps([event("repository_download_operation", 2, ident=2),
                      event("repository_download_operation", 3, ident=3)]).encode()

    async def scenario(base: str, session: aiohttp.ClientSession) -> list[Any]:
        statuses = [(await post(session, base, body, token=token))[0]
                    for body, token in ((one, TOKEN), (two, TOKEN), (one, "wrong"), (b"{nope", TOKEN))]
        async with session.get(base + "/metrics") as response:
            return [statuses, response.headers["Content-Type"], await response.text()]

    statuses, content_type, text = run(settings, scenario)
    assert statuses == [200, 200, 401, 400]
    assert content_type == "text/plain; version=0.0.4; charset=utf-8"
    families = parse_metrics(text)
    assert sample_values(families) == {
        'sunset_receiver_requests_total{code="200"}': 2, 'sunset_receiver_requests_total{code="401"}': 1,
        'sunset_receiver_requests_total{code="400"}': 1, "sunset_receiver_events_total": 3,
        "sunset_receiver_bytes_total": len(one) + len(two),
        'sunset_stream_dead_letters_total{reason="invalid JSON"}': 1}
    assert {name: (f["type"], f["help"]) for name, f in families.items() if name.startswith("sunset_receiver_")
            and f["type"] == "counter"} == {
        "sunset_receiver_requests": ("counter", "HTTP requests to the receiver, by status code."),
        "sunset_receiver_events": ("counter", "Events published by the receiver."),
        "sunset_receiver_bytes": ("counter", "Request body bytes accepted by the receiver.")}
    assert families["process_resident_memory_bytes"]["samples"]["process_resident_memory_bytes"] > 0


def test_a_single_event_of_two_mib_is_accepted_and_published(broker: EmbeddedBroker) -> None:
    """Under GitLab's 25 MiB body cap, one large event (here 2 MiB of details) is on the broker
    before the 200: the producer's request size and the topic's message size follow the cap."""
    settings = settings_for(broker.url)
    big = event("repository_download_operation", 1, project="acme/big", ident="big-1",
                details={"custom_message": "x" * (2 * 1024 * 1024)})
    body = json.dumps(big).encode()

    async def scenario(base: str, session: aiohttp.ClientSession) -> Any:
        return await post(session, base, body)

    assert run(settings, scenario) == (200, {"accepted": 1, "dead_letters": 0})
    records = read_topic(settings.kafka_bootstrap(), settings.input_topic, lambda r: len(r) >= 1)
    assert [(k, json.loads(v)) for k, v in records] == [(b"acme/big", big)]
