"""The receiver against malformed requests and bodies that are no events (issue 27): a 400 or a dead
letter with its reason, counted in the answer — never a 500, never a header value quoted back or
logged, never a traceback per request."""

from __future__ import annotations

import json
import logging
import uuid
from typing import Any

import pytest
from streamkit import broker_fixture, event, read_topic  # noqa: F401 - `broker`
from test_stream_hostile import TOKEN, post_head, raw_request, serve_and, status_and_body

from streams.dev import EmbeddedBroker, free_port
from streams.receiver import HOOK_TOKEN_HEADER, TOKEN_HEADER
from streams.settings import StreamSettings, load_settings


def settings_for(broker: str) -> StreamSettings:
    name = f"rq-{uuid.uuid4().hex[:8]}"
    return load_settings("dev", broker=broker, token=TOKEN, input_topic=f"{name}-in", dead_letter_topic=f"{name}-dead",
                         findings_topic=f"{name}-findings", partitions=2, publish_timeout=3.0)


def nowhere() -> StreamSettings:
    """A broker nobody listens on: these requests are refused before anything is published."""
    return settings_for(f"kafka://127.0.0.1:{free_port()}")


def test_a_body_that_is_not_the_gzip_its_header_says_is_a_400() -> None:
    body = json.dumps(event("repository_download_operation", 1, ident=1)).encode()
    head = post_head(len(body)).replace(b"\r\n\r\n", b"\r\nContent-Encoding: gzip\r\n\r\n")

    async def scenario(port: int) -> tuple[int, Any]:
        return status_and_body(await raw_request(port, head, body))

    status, answer = serve_and(nowhere(), scenario, ready=False)
    assert status == 400
    assert answer["error"].startswith("cannot decode the body (")


@pytest.mark.parametrize(("method", "path"), [("GET", "/health"), ("POST", "/health"), ("POST", "/metrics"),
                                            ("POST", "/nowhere"), ("GET", "/nowhere"), ("PUT", "/audit-events"),
                                            ("POST", "/audit-events"), ("POST", "/system-hooks")])
def test_gzip_that_is_not_gzip_on_any_route_is_a_400_and_one_quiet_log_line(
        method: str, path: str, caplog: pytest.LogCaptureFixture) -> None:
    """aiohttp decodes the body as it reads it, and drains what a handler left unread after the
    answer: on a route that takes no body the answer used to be the route's own and the drain a
    traceback. Every route answers 400, and the log has no traceback and no header value."""
    body = json.dumps(event("repository_download_operation", 1, ident=1)).encode() * 50
    head = (f"{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n{TOKEN_HEADER}: {TOKEN}\r\n"
            f"{HOOK_TOKEN_HEADER}: {TOKEN}\r\nContent-Encoding: gzip\r\nContent-Length: {len(body)}\r\n\r\n").encode()

    async def scenario(port: int) -> tuple[int, Any]:
        return status_and_body(await raw_request(port, head, body))

    with caplog.at_level(logging.DEBUG):
        status, answer = serve_and(nowhere(), scenario, ready=False)
    assert (status, answer) == (400, {"error": "cannot decode the body (RequestPayloadError); "
                                               "Content-Encoding says what it is not"})
    mine = [r for r in caplog.records if r.name.startswith(("aiohttp", "sunset.stream.receiver"))
            and "broker unavailable" not in r.getMessage()]
    assert [(r.name, r.getMessage()) for r in mine if r.name != "aiohttp.access"] == [
        ("sunset.stream.receiver",
         "a request body from 127.0.0.1 could not be read (RequestPayloadError); connection closed")]
    assert [r for r in caplog.records if r.exc_info or r.exc_text] == []
    assert not any(TOKEN in f"{r.getMessage()} {r.args!r}" for r in caplog.records)


def test_a_body_a_route_does_not_take_is_read_and_the_route_answers() -> None:
    body = b'{"not": "for this route"}'
    head = (f"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: {len(body)}\r\n\r\n"
            "").encode()
    missing = f"POST /nowhere HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: {len(body)}\r\n\r\n"

    async def scenario(port: int) -> list[int]:
        return [int((await raw_request(port, h, body)).split(b" ")[1]) for h in (head, missing.encode())]

    assert serve_and(nowhere(), scenario, ready=False) == [503, 404]  # the broker is not there; no such route


SECRET = b"tok-3f9a-SECRET-value"


@pytest.mark.parametrize("line", [
    TOKEN_HEADER.encode() + b": " + SECRET + b"\x00",  # a token followed by NUL
    TOKEN_HEADER.encode() + b": " + SECRET + b"\r\n  folded",  # an obs-folded token
    TOKEN_HEADER.encode() + b": " + SECRET + b"\x01\x7f",
    b"X-" + SECRET + b"\x00: v",  # in the name
], ids=["nul", "obs-fold", "controls", "name"])
def test_a_malformed_header_line_is_a_400_that_never_quotes_it(line: bytes, caplog: pytest.LogCaptureFixture) -> None:
    head = (b"POST /audit-events HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + line
            + b"\r\nContent-Length: 2\r\n\r\n")

    async def scenario(port: int) -> bytes:
        return await raw_request(port, head, b"{}")

    with caplog.at_level(logging.DEBUG):
        answer = serve_and(nowhere(), scenario, ready=False)
    assert status_and_body(answer) == (400, {"error": "malformed HTTP request"})
    assert SECRET not in answer
    logged = "\n".join(f"{r.getMessage()} {r.exc_text or ''} {r.exc_info or ''}" for r in caplog.records)
    assert SECRET.decode() not in logged
    assert "Traceback" not in logged and not any(r.exc_info for r in caplog.records)
    said = [r.getMessage() for r in caplog.records if "malformed" in r.getMessage()]
    assert len(said) == 1 and said[0].startswith("malformed request from 127.0.0.1 refused (")


def test_elements_that_are_no_events_and_a_hook_with_a_boolean_project_go_to_dead_letters(
        broker: EmbeddedBroker) -> None:
    settings = settings_for(broker.url)
    junk = b'[1, "a", null]'
    mixed = json.dumps([event("repository_download_operation", 1, ident=1), 7]).encode()
    hook = json.dumps({"event_name": "push", "project_id": True}).encode()

    async def scenario(port: int) -> list[tuple[int, Any]]:
        out = [status_and_body(await raw_request(port, post_head(len(body)), body)) for body in (junk, mixed)]
        head = (b"POST /system-hooks HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + HOOK_TOKEN_HEADER.encode()
                + b": " + TOKEN.encode() + b"\r\nContent-Length: " + str(len(hook)).encode() + b"\r\n\r\n")
        out.append(status_and_body(await raw_request(port, head, hook)))
        return out

    assert serve_and(settings, scenario) == [(200, {"accepted": 0, "dead_letters": 3}),
                                                     (200, {"accepted": 1, "dead_letters": 1}),
                                                     (200, {"accepted": 0, "dead_letters": 1})]
    dead = [json.loads(v) for _, v in read_topic(broker.bootstrap, settings.dead_letter_topic, lambda r: len(r) >= 5)]
    assert sorted((d["reason"], d["element"], d["payload"]) for d in dead) == [
        ("not a JSON object", 0, "1"), ("not a JSON object", 1, '"a"'), ("not a JSON object", 1, "7"),
        ("not a JSON object", 2, "null"), ("system hook push without an integer project_id", None, hook.decode())]
    published = read_topic(broker.bootstrap, settings.input_topic, lambda r: len(r) >= 1)
    assert [json.loads(v)["id"] for _, v in published] == [1]
