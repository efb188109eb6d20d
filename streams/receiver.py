"""`sunset stream receive`: an HTTP destination for GitLab's audit-event streaming.

GitLab POSTs one JSON event per request (a proposed change sends arrays; both are accepted) with
the destination's verification token in `X-Gitlab-Event-Streaming-Token` and the type in
`X-Gitlab-Audit-Event-Type`; the documented Content-Type is form-encoded although the body is
JSON, so the body is parsed as JSON whatever the Content-Type says. GitLab does not retry a
failed delivery, so an event is answered 2xx only once the broker has acknowledged it:

* 401 wrong, missing or undecodable token (compared in constant time), 413 body over the byte
  cap, over `max_body_values` JSON values (counted on the bytes, before parsing) or over
  `max_events_per_request` events, 408 body not received within `body_timeout`,
  400 not JSON (invalid UTF-8, lone surrogates, nesting deeper than 1,024) / not an object or
  array / an element that cannot be re-encoded (recorded on the dead-letter topic),
  503 broker unavailable (not started, or no acknowledgement within `publish_timeout`).

A connection that has not sent a request's headers within `header_timeout` seconds is closed
(aiohttp's keep-alive timer, which runs from the connection's start and while it is idle).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson
from aiohttp import web

from streams.kafka import ensure_topics, new_producer
from streams.metrics import CONTENT_TYPE, Metrics
from streams.settings import StreamSettings

TOKEN_HEADER = "X-Gitlab-Event-Streaming-Token"
HOOK_TOKEN_HEADER = "X-Gitlab-Token"  # a system hook's secret token (doc/administration/system_hooks.md)
# The instance scan's topic, `<app id>-instance-projects` (scanner.instance.distributed.TOPIC_SUFFIX; streams
# does not import scanner, a test holds the two equal). Push and repository-update hooks go there.
INSTANCE_TOPIC_SUFFIX = "-instance-projects"
HOOK_EVENTS = ("push", "repository_update")
TYPE_HEADER = "X-Gitlab-Audit-Event-Type"
DEAD_PAYLOAD_MAX = 64 * 1024
log = logging.getLogger("sunset.stream.receiver")


class BrokerUnavailable(Exception):
    """The broker did not take the events in time."""


class KafkaPublisher:
    """An aiokafka producer that starts in the background and keeps retrying while the broker is down."""

    def __init__(self, settings: StreamSettings) -> None:
        self.settings = settings
        self.producer: Any = None
        self._starter: asyncio.Task[None] | None = None
        self._pending: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        self._starter = asyncio.create_task(self._connect())

    async def _connect(self) -> None:
        while self.producer is None:
            producer = new_producer(self.settings, request_timeout_ms=int(self.settings.publish_timeout * 1000))
            try:
                await ensure_topics(self.settings)
                await producer.start()
            except Exception as exc:  # noqa: BLE001 - any connection failure: retry, the receiver answers 503
                log.warning("broker unavailable (%s); retrying", exc)
                with contextlib.suppress(Exception):
                    await producer.stop()
                await asyncio.sleep(1.0)
            else:
                self.producer = producer

    async def stop(self) -> None:
        if self._starter is not None:
            self._starter.cancel()
        if self.producer is not None:
            await self.producer.stop()

    @property
    def ready(self) -> bool:
        return self.producer is not None

    async def publish(self, topic: str, messages: list[tuple[bytes | None, bytes]]) -> None:
        """Send and wait for the broker's acknowledgement, at most `publish_timeout` seconds."""
        if self.producer is None:
            raise BrokerUnavailable("not connected")

        async def send_all() -> None:
            futures = [await self.producer.send(topic, value, key=key) for key, value in messages]
            await asyncio.gather(*futures)

        task = asyncio.create_task(send_all())
        done, _ = await asyncio.wait({task}, timeout=self.settings.publish_timeout)
        if not done:
            self._pending.add(task)  # let it finish (or fail) in the background; the client gets 503
            task.add_done_callback(self._finished)
            raise BrokerUnavailable("no acknowledgement in time")
        if task.exception() is not None:
            raise BrokerUnavailable(repr(task.exception()))

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._pending.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("late publish failed: %r", task.exception())


def _authorized(request: web.Request, token: str, header: str = TOKEN_HEADER) -> bool:
    """aiohttp decodes header bytes that are not UTF-8 as surrogates: those never match a token
    (which is text), and never raise."""
    got = request.headers.get(header, "").encode("utf-8", "surrogateescape")
    return hmac.compare_digest(got, token.encode())


async def _read_capped(request: web.Request, cap: int) -> bytes | None:
    """The body, or None when it is larger than `cap` (read no further than that)."""
    if request.content_length is not None and request.content_length > cap:
        return None
    chunks, size = [], 0
    while chunk := await request.content.read(65536):
        size += len(chunk)
        if size > cap:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


@dataclass(frozen=True, slots=True)
class Refused:
    """A body the receiver does not publish: the status, the client's error, and the dead-letter
    reason (None: not recorded, e.g. too large to keep)."""

    status: int
    error: str
    reason: str | None = None


def _values_bound(body: bytes) -> int:
    """An upper bound of the JSON values in `body`: each value but the first of its container is
    preceded by a comma, each container opens with a bracket (keys count once more). C-speed
    counts over the bytes: a body is refused before a parser builds millions of objects."""
    return 2 * (body.count(b",") + body.count(b"{") + body.count(b"[") + 1)


Messages = list[tuple[bytes | None, bytes]]


def parse_body(body: bytes, event_type: str | None, settings: StreamSettings) -> Messages | Refused:
    """One message per event, keyed by `entity_path` for locality; or why the body is refused."""
    if _values_bound(body) > settings.max_body_values:
        return Refused(413, f"body has more than {settings.max_body_values} JSON values")
    try:
        doc = orjson.loads(body)  # strict UTF-8, no lone surrogates, depth ≤ 1,024: never recursion
    except orjson.JSONDecodeError as exc:
        return Refused(400, f"invalid JSON: {exc}", f"invalid JSON: {exc}")
    if isinstance(doc, dict):
        if event_type and not doc.get("event_type"):
            doc = {**doc, "event_type": event_type}
        items: list[Any] = [doc]
    elif isinstance(doc, list):
        items = doc
    else:
        return Refused(400, "expected a JSON object or an array of objects", "not a JSON object or array")
    if len(items) > settings.max_events_per_request:
        return Refused(413, f"more than {settings.max_events_per_request} events in one body")
    out = []
    for item in items:
        path = item.get("entity_path") if isinstance(item, dict) else None
        try:
            value = orjson.dumps(item)
        except orjson.JSONEncodeError as exc:  # nested past orjson's 254 levels on the way out
            return Refused(400, f"cannot re-encode an event: {exc}", f"cannot re-encode an event: {exc}")
        out.append((path.encode() if isinstance(path, str) else None, value))
    return out


class Receiver:
    """The request handlers, over one publisher and one metrics object."""

    def __init__(self, settings: StreamSettings, publisher: KafkaPublisher, metrics: Metrics) -> None:
        if settings.token is None or not settings.token.get_secret_value():
            raise ValueError("the receiver needs a verification token")
        self.settings, self.publisher, self.metrics = settings, publisher, metrics
        self.token = settings.token.get_secret_value()

    def _answer(self, status: int, body: dict[str, Any]) -> web.Response:
        self.metrics.inc("sunset_receiver_requests_total", code=str(status))
        return web.json_response(body, status=status)

    async def audit_events(self, request: web.Request) -> web.Response:
        if not _authorized(request, self.token):
            return self._answer(401, {"error": "invalid or missing " + TOKEN_HEADER})
        try:
            async with asyncio.timeout(self.settings.body_timeout):
                body = await _read_capped(request, self.settings.max_body_bytes)
        except TimeoutError:
            return self._answer(408, {"error": f"body not received within {self.settings.body_timeout:g} s"})
        if body is None:
            return self._answer(413, {"error": f"body larger than {self.settings.max_body_bytes} bytes"})
        messages = parse_body(body, request.headers.get(TYPE_HEADER), self.settings)
        if isinstance(messages, Refused):
            if messages.reason is not None:
                await self._record_bad(body, messages.reason)
            return self._answer(messages.status, {"error": messages.error})
        try:
            await self.publisher.publish(self.settings.input_topic, messages)
        except BrokerUnavailable as exc:
            return self._answer(503, {"error": f"broker unavailable: {exc}"})
        self.metrics.inc("sunset_receiver_events_total", len(messages))
        self.metrics.inc("sunset_receiver_bytes_total", len(body))
        return self._answer(200, {"accepted": len(messages)})

    async def system_hooks(self, request: web.Request) -> web.Response:
        """GitLab system hooks (`X-Gitlab-Token`: the same verification token): `push` and
        `repository_update` go to the instance scan's topic as they came, keyed by project id (as
        `sunset instance publish` keys them); other events are answered 200 and dropped."""
        if not _authorized(request, self.token, HOOK_TOKEN_HEADER):
            return self._answer(401, {"error": "invalid or missing " + HOOK_TOKEN_HEADER})
        try:
            async with asyncio.timeout(self.settings.body_timeout):
                body = await _read_capped(request, self.settings.max_body_bytes)
        except TimeoutError:
            return self._answer(408, {"error": f"body not received within {self.settings.body_timeout:g} s"})
        if body is None or _values_bound(body) > self.settings.max_body_values:
            return self._answer(413, {"error": "body too large"})
        try:
            doc = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            return self._answer(400, {"error": f"invalid JSON: {exc}"})
        name = doc.get("event_name") if isinstance(doc, dict) else None
        ident = doc.get("project_id") if isinstance(doc, dict) else None
        if name not in HOOK_EVENTS or not isinstance(ident, int):
            return self._answer(200, {"ignored": name if isinstance(name, str) else None})
        try:
            await self.publisher.publish(self.settings.app_id + INSTANCE_TOPIC_SUFFIX, [(str(ident).encode(), body)])
        except BrokerUnavailable as exc:
            return self._answer(503, {"error": f"broker unavailable: {exc}"})
        return self._answer(200, {"accepted": 1})

    async def _record_bad(self, body: bytes, reason: str) -> None:
        """Invalid bodies go to the dead-letter topic too (best effort: the client gets 400 anyway)."""
        record = {"reason": reason, "source": "receiver", "received_at": datetime.now(UTC).isoformat(),
                  "payload": body[:DEAD_PAYLOAD_MAX].decode("utf-8", errors="replace")}
        self.metrics.inc("sunset_stream_dead_letters_total", reason=reason.split(":", 1)[0])
        try:
            await self.publisher.publish(self.settings.dead_letter_topic, [(None, json.dumps(record).encode())])
        except BrokerUnavailable as exc:
            log.warning("could not record a bad request on the dead-letter topic: %s", exc)

    async def health(self, request: web.Request) -> web.Response:
        ready = self.publisher.ready
        return web.json_response({"status": "ok" if ready else "broker unavailable"}, status=200 if ready else 503)

    async def metrics_view(self, request: web.Request) -> web.Response:
        return web.Response(text=self.metrics.render(), content_type=CONTENT_TYPE)


def create_receiver(settings: StreamSettings, publisher: KafkaPublisher | None = None) -> web.Application:
    """The aiohttp application; the publisher starts and stops with it."""
    publisher = publisher or KafkaPublisher(settings)
    receiver = Receiver(settings, publisher, Metrics())
    app = web.Application(client_max_size=settings.max_body_bytes)
    app.router.add_post("/audit-events", receiver.audit_events)
    app.router.add_post("/system-hooks", receiver.system_hooks)
    app.router.add_get("/health", receiver.health)
    app.router.add_get("/metrics", receiver.metrics_view)

    async def lifecycle(_: web.Application) -> Any:
        await publisher.start()
        yield
        await publisher.stop()

    app.cleanup_ctx.append(lifecycle)
    return app


def runner_options(settings: StreamSettings) -> dict[str, Any]:
    """What the aiohttp runner needs besides the app: the header timeout (see the module's docstring)."""
    return {"keepalive_timeout": settings.header_timeout}


def serve(settings: StreamSettings) -> None:
    """Run until interrupted."""
    web.run_app(create_receiver(settings), host=settings.receiver_host, port=settings.receiver_port, print=None,
                **runner_options(settings))
