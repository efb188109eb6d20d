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

A body on any other route (`/health`, `/metrics`, one that does not exist) is read and dropped
before the route answers, within the same bounds: one that cannot be decoded as its
`Content-Encoding` says is answered 400 there too. The receiver's log never holds a header value,
and a body a client sent wrong is one line in it, never a traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import signal
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson
from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.typedefs import Handler
from aiohttp.web_protocol import RequestHandler, RequestPayloadError
from aiohttp.web_request import BaseRequest
from aiohttp.web_response import StreamResponse

from streams.events import values_bound
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

    async def publish(self, topic: str, messages: Sequence[tuple[bytes | None, bytes]]) -> None:
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
        if (failed := task.exception()) is not None:  # the client hears its kind; the text is the log's
            log.warning("publish failed: %s: %s", type(failed).__name__, failed)
            raise BrokerUnavailable(type(failed).__name__)

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._pending.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("late publish failed: %r", task.exception())


def _authorized(request: web.Request, token: str, header: str = TOKEN_HEADER) -> bool:
    """aiohttp decodes header bytes that are not UTF-8 as surrogates: those never match a token
    (which is text), and never raise."""
    got = request.headers.get(header, "").encode("utf-8", "surrogateescape")
    return hmac.compare_digest(got, token.encode())


class BodyUnreadable(Exception):
    """The body could not be decoded as its headers say (e.g. `Content-Encoding: gzip` that is not gzip)."""


async def _read_capped(request: web.Request, cap: int) -> bytes | None:
    """The body, or None when it is larger than `cap` (read no further than that)."""
    if request.content_length is not None and request.content_length > cap:
        return None
    chunks, size = [], 0
    while True:
        try:
            chunk = await request.content.read(65536)
        except (HttpProcessingError, RequestPayloadError) as exc:  # aiohttp decodes Content-Encoding as it reads
            raise BodyUnreadable(f"cannot decode the body ({type(exc).__name__}); "
                                 "Content-Encoding says what it is not") from None
        if not chunk:
            break
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


Messages = list[tuple[bytes | None, bytes]]


@dataclass(frozen=True, slots=True)
class Parsed:
    """A body's events as messages (keyed by `entity_path` for locality), and its elements that
    are no event at all (element index, reason, the element): dead letters, counted in the answer."""

    messages: Messages
    dead: list[tuple[int, str, bytes]]


def parse_body(body: bytes, event_type: str | None, settings: StreamSettings) -> Parsed | Refused:
    """One message per event; or why the whole body is refused."""
    if values_bound(body) > settings.max_body_values:
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
    out: Messages = []
    dead: list[tuple[int, str, bytes]] = []
    for index, item in enumerate(items):
        try:
            value = orjson.dumps(item)
        except orjson.JSONEncodeError as exc:  # nested past orjson's 254 levels on the way out
            return Refused(400, f"cannot re-encode an event: {exc}", f"cannot re-encode an event: {exc}")
        if type(item) is not dict:
            dead.append((index, "not a JSON object", value))
            continue
        path = item.get("entity_path")
        out.append((path.encode() if isinstance(path, str) else None, value))
    return Parsed(out, dead)


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

    async def _body(self, request: web.Request) -> bytes | web.Response:
        """The request's body, or the answer that refuses it (too slow, too large, undecodable)."""
        try:
            async with asyncio.timeout(self.settings.body_timeout):
                body = await _read_capped(request, self.settings.max_body_bytes)
        except TimeoutError:
            return self._answer(408, {"error": f"body not received within {self.settings.body_timeout:g} s"})
        except BodyUnreadable as exc:
            return self._answer(400, {"error": str(exc)})
        if body is None:
            return self._answer(413, {"error": f"body larger than {self.settings.max_body_bytes} bytes"})
        return body

    async def audit_events(self, request: web.Request) -> web.Response:
        if not _authorized(request, self.token):
            return self._answer(401, {"error": "invalid or missing " + TOKEN_HEADER})
        body = await self._body(request)
        if isinstance(body, web.Response):
            return body
        parsed = parse_body(body, request.headers.get(TYPE_HEADER), self.settings)
        if isinstance(parsed, Refused):
            if parsed.reason is not None:
                await self._record_bad(body, parsed.reason)
            return self._answer(parsed.status, {"error": parsed.error})
        dead = [(None, self._dead_letter(value, reason, element)) for element, reason, value in parsed.dead]
        try:
            await self.publisher.publish(self.settings.input_topic, parsed.messages)
            if dead:
                await self.publisher.publish(self.settings.dead_letter_topic, dead)
        except BrokerUnavailable as exc:
            return self._answer(503, {"error": f"broker unavailable: {exc}"})
        for _, reason, _ in parsed.dead:
            self.metrics.inc("sunset_stream_dead_letters_total", reason=reason)
        self.metrics.inc("sunset_receiver_events_total", len(parsed.messages))
        self.metrics.inc("sunset_receiver_bytes_total", len(body))
        return self._answer(200, {"accepted": len(parsed.messages), "dead_letters": len(dead)})

    async def system_hooks(self, request: web.Request) -> web.Response:
        """GitLab system hooks (`X-Gitlab-Token`: the same verification token): `push` and
        `repository_update` go to the instance scan's topic as they came, keyed by project id (as
        `sunset instance publish` keys them); other events are answered 200 and dropped."""
        if not _authorized(request, self.token, HOOK_TOKEN_HEADER):
            return self._answer(401, {"error": "invalid or missing " + HOOK_TOKEN_HEADER})
        body = await self._body(request)
        if isinstance(body, web.Response):
            return body
        if values_bound(body) > self.settings.max_body_values:
            return self._answer(413, {"error": f"body has more than {self.settings.max_body_values} JSON values"})
        try:
            doc = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            return self._answer(400, {"error": f"invalid JSON: {exc}"})
        name = doc.get("event_name") if isinstance(doc, dict) else None
        ident = doc.get("project_id") if isinstance(doc, dict) else None
        if name not in HOOK_EVENTS:
            return self._answer(200, {"ignored": name if isinstance(name, str) else None})
        topic, key, value = self.settings.app_id + INSTANCE_TOPIC_SUFFIX, str(ident).encode(), body
        key_or_none: bytes | None = key
        if type(ident) is not int:  # JSON `true` is no project id, though Python's bool is an int
            reason = f"system hook {name} without an integer project_id"
            topic, key_or_none, value = self.settings.dead_letter_topic, None, self._dead_letter(body, reason)
        try:
            await self.publisher.publish(topic, [(key_or_none, value)])
        except BrokerUnavailable as exc:
            return self._answer(503, {"error": f"broker unavailable: {exc}"})
        if key_or_none is None:
            self.metrics.inc("sunset_stream_dead_letters_total", reason="system hook without project_id")
            return self._answer(200, {"accepted": 0, "dead_letters": 1})
        return self._answer(200, {"accepted": 1, "dead_letters": 0})

    @staticmethod
    def _dead_letter(payload: bytes, reason: str, element: int | None = None) -> bytes:
        """A dead-letter record of the receiver's: why, when, and the payload (its first 64 KiB)."""
        record = {"reason": reason, "source": "receiver", "received_at": datetime.now(UTC).isoformat(),
                  "element": element, "payload": payload[:DEAD_PAYLOAD_MAX].decode("utf-8", errors="replace")}
        return json.dumps(record).encode()

    async def _record_bad(self, body: bytes, reason: str) -> None:
        """Invalid bodies go to the dead-letter topic too (best effort: the client gets 400 anyway)."""
        self.metrics.inc("sunset_stream_dead_letters_total", reason=reason.split(":", 1)[0])
        try:
            await self.publisher.publish(self.settings.dead_letter_topic, [(None, self._dead_letter(body, reason))])
        except BrokerUnavailable as exc:
            log.warning("could not record a bad request on the dead-letter topic: %s", exc)

    @web.middleware
    async def drop_other_bodies(self, request: web.Request, handler: Handler) -> StreamResponse:
        """A body sent to a route that takes none, read and dropped first (bounded as the events' are):
        the route answers only once it is read, and one that cannot be decoded is answered 400."""
        if request.body_exists and handler not in (self.audit_events, self.system_hooks):
            body = await self._body(request)
            if isinstance(body, web.Response):
                return body
        return await handler(request)

    async def health(self, request: web.Request) -> web.Response:
        ready = self.publisher.ready
        return web.json_response({"status": "ok" if ready else "broker unavailable"}, status=200 if ready else 503)

    async def metrics_view(self, request: web.Request) -> web.Response:
        return web.Response(text=self.metrics.render(), content_type=CONTENT_TYPE)


def create_receiver(settings: StreamSettings, publisher: KafkaPublisher | None = None) -> web.Application:
    """The aiohttp application; the publisher starts and stops with it."""
    publisher = publisher or KafkaPublisher(settings)
    receiver = Receiver(settings, publisher, Metrics())
    app = web.Application(client_max_size=settings.max_body_bytes, middlewares=[receiver.drop_other_bodies])
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


class _QuietHandler(RequestHandler):
    """aiohttp's connection handler, but for a request it cannot parse (a malformed header line, a
    bad request line): aiohttp's own answer quotes the offending line — a token in it included —
    and logs a traceback per request; this answers a fixed 400 and logs one line without the value.
    A body that fails to decode while aiohttp drains what a handler left unread, once the answer is
    sent, is the client's error too: one line, the connection closed, no traceback."""

    def log_exception(self, *args: Any, **kw: Any) -> None:
        exc = kw.get("exc_info")
        if isinstance(exc, (HttpProcessingError, RequestPayloadError)):
            log.warning("a request body from %s could not be read (%s); connection closed",
                        self.request_remote(), type(exc).__name__)
            return
        super().log_exception(*args, **kw)

    def request_remote(self) -> str:
        """The peer's address (the only part of a bad request the log shows)."""
        peer = self.transport.get_extra_info("peername") if self.transport is not None else None
        return str(peer[0]) if isinstance(peer, tuple) and peer else "a closed connection"

    def handle_error(self, request: BaseRequest, status: int = 500, exc: BaseException | None = None,
                     message: str | None = None) -> StreamResponse:
        if status != 400:
            return super().handle_error(request, status, exc, message)
        log.warning("malformed request from %s refused (%s)", request.remote,
                    "unknown" if exc is None else type(exc).__name__)
        response = web.json_response({"error": "malformed HTTP request"}, status=400)
        response.force_close()
        return response


class _QuietServer(web.Server):
    def __call__(self) -> RequestHandler:
        return _QuietHandler(self, loop=self._loop, **self._kwargs)


class ReceiverRunner(web.AppRunner):
    """The receiver's runner: its connections are handled by `_QuietHandler`."""

    async def _make_server(self) -> web.Server:
        server = await super()._make_server()
        server.__class__ = _QuietServer  # the same server; only the handler it makes per connection differs
        return server


# aiohttp's access log line without its default `Referer` and `User-Agent` fields: the receiver never
# writes a header value to its log (a token sent in any header stays out of it).
ACCESS_LOG_FORMAT = '%a %t "%r" %s %b %Tf'


def receiver_runner(settings: StreamSettings, publisher: KafkaPublisher | None = None) -> ReceiverRunner:
    """The runner of the receiver's app, with the header timeout (see the module's docstring)."""
    return ReceiverRunner(create_receiver(settings, publisher), keepalive_timeout=settings.header_timeout,
                          access_log_format=ACCESS_LOG_FORMAT)


def serve(settings: StreamSettings) -> None:
    """Run until SIGINT or SIGTERM."""
    async def run() -> None:
        runner = receiver_runner(settings)
        await runner.setup()
        try:
            await web.TCPSite(runner, settings.receiver_host, settings.receiver_port).start()
            stop = asyncio.Event()
            for signum in (signal.SIGINT, signal.SIGTERM):
                asyncio.get_running_loop().add_signal_handler(signum, stop.set)
            await stop.wait()
        finally:
            await runner.cleanup()

    asyncio.run(run())
