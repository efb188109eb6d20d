"""Issue 27, "the receiver never echoes a header value": well-formed and malformed requests whose
headers carry a secret (the verification token, right or wrong, a bearer token, a cookie, a user
agent and a referer), with bodies of every kind the receiver answers (an event, JSON that is no
event, a body that is not JSON, gzip that is not gzip, a body over the limit), on every route; not
one answer and not one log record (at DEBUG, aiohttp's access log included) holds the secret."""

from __future__ import annotations

import gzip
import json
import logging
import uuid
from typing import Any

import pytest
from test_stream_hostile import TOKEN, raw_request, serve_and

from streams.dev import free_port
from streams.receiver import HOOK_TOKEN_HEADER, TOKEN_HEADER
from streams.settings import StreamSettings, load_settings

SECRET = "glpat-Rq7zX2mN9vB4kT8wY1aE"
EVENT = json.dumps({"id": 1, "event_type": "repository_download_operation", "author_id": 2,
                    "entity_path": "g/p", "created_at": "2026-11-27T10:00:00Z"}).encode()
BODIES = {
    "event": (EVENT, {}),
    "no-event": (json.dumps([1, SECRET, None]).encode(), {}),
    "not-json": (b"{" + SECRET.encode(), {}),
    "not-gzip": (EVENT, {"Content-Encoding": "gzip"}),
    "gzip": (gzip.compress(EVENT), {"Content-Encoding": "gzip"}),
    "oversize": (b"[" + b" " * 70_000 + b"]", {}),
}
# (the header that carries the secret, whether the verification token is also sent, right)
HEADERS = {
    "wrong-token": ({TOKEN_HEADER: SECRET}, False),
    "wrong-hook-token": ({HOOK_TOKEN_HEADER: SECRET}, False),
    "bearer": ({"Authorization": f"Bearer {SECRET}"}, True),
    "cookie": ({"Cookie": f"_gitlab_session={SECRET}"}, True),
    "user-agent": ({"User-Agent": f"curl {SECRET}"}, True),
    "referer": ({"Referer": f"https://x/?private_token={SECRET}"}, True),
    "forwarded": ({"X-Forwarded-For": SECRET}, True),
}
PATHS = ("/audit-events", "/system-hooks", "/health", "/nowhere")


def nowhere() -> StreamSettings:
    """A broker nobody listens on: an accepted event is answered 503, nothing else needs one."""
    name = f"echo-{uuid.uuid4().hex[:8]}"
    return load_settings("dev", broker=f"kafka://127.0.0.1:{free_port()}", token=TOKEN, input_topic=f"{name}-in",
                         dead_letter_topic=f"{name}-dead", findings_topic=f"{name}-findings", partitions=1,
                         publish_timeout=1.0, max_body_bytes=65_536)


def request(path: str, headers: dict[str, str], with_token: bool, body: bytes, extra: dict[str, str]) -> bytes:
    lines = [f"POST {path} HTTP/1.1", "Host: x", "Connection: close", "Content-Type: application/json",
             f"Content-Length: {len(body)}"]
    if with_token:
        lines += [f"{TOKEN_HEADER}: {TOKEN}", f"{HOOK_TOKEN_HEADER}: {TOKEN}"]
    lines += [f"{k}: {v}" for k, v in {**headers, **extra}.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def logged(caplog: pytest.LogCaptureFixture) -> str:
    return "\n".join(f"{r.name} {r.getMessage()} {r.exc_text or ''} {r.exc_info or ''} {r.args!r}"
                     for r in caplog.records)


@pytest.mark.parametrize("header", sorted(HEADERS))
def test_no_header_value_in_any_answer_or_log(header: str, caplog: pytest.LogCaptureFixture) -> None:
    headers, with_token = HEADERS[header]
    cases = [(path, name) for path in PATHS for name in sorted(BODIES)]

    async def scenario(port: int) -> list[tuple[str, str, bytes]]:
        answers = []
        for path, name in cases:
            body, extra = BODIES[name]
            answers.append((path, name, await raw_request(port, request(path, headers, with_token, body, extra), body)))
        return answers

    with caplog.at_level(logging.DEBUG):
        answers = serve_and(nowhere(), scenario, ready=False)
    statuses = {(path, name): int(answer.split(b" ")[1]) for path, name, answer in answers}
    # not vacuous: every request had an answer, and the refusals are the receiver's own
    assert len(statuses) == len(cases) and all(100 <= s < 600 for s in statuses.values())
    if not with_token:
        assert statuses[("/audit-events", "event")] == 401 and statuses[("/system-hooks", "event")] == 401
    else:
        assert statuses[("/audit-events", "not-json")] == 400 and statuses[("/audit-events", "oversize")] == 413
    leaked = [(path, name) for path, name, answer in answers if SECRET.encode() in answer]
    assert leaked == []
    text = logged(caplog)
    assert SECRET not in text, text


def test_a_malformed_header_line_holding_the_secret(caplog: pytest.LogCaptureFixture) -> None:
    """The header line aiohttp cannot parse (a value with NUL) is answered without quoting it."""
    head = (f"POST /audit-events HTTP/1.1\r\nHost: x\r\nConnection: close\r\n{TOKEN_HEADER}: {TOKEN}\r\n"
            f"Authorization: Bearer {SECRET}\x00\r\nContent-Length: {len(EVENT)}\r\n\r\n").encode()

    async def scenario(port: int) -> bytes:
        return await raw_request(port, head, EVENT)

    with caplog.at_level(logging.DEBUG):
        answer = serve_and(nowhere(), scenario, ready=False)
    status: Any = int(answer.split(b" ")[1])
    assert status == 400 and SECRET.encode() not in answer
    assert SECRET not in logged(caplog)
