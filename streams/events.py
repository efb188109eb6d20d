"""GitLab audit events: parse, validate, normalize, and decide which stage each one belongs to.

A raw payload (one JSON object, or an array of them) becomes normalized events or `Rejected`
reasons for the dead letters. Normalized events keep GitLab's field names (`event_type`,
`entity_path`, `author_id`, `ip_address`, …, as built by GitLab's streaming in
`ee/lib/audit_events/strategies/external_destination_strategy.rb`; types from
`ee/config/audit_events/types/*.yml`), with values of the documented types, plus four computed
fields: `ts` (epoch seconds of `created_at`), `download`, `pkey` (project-stage key) and `akey`
(actor-stage key). See docs/streams.md for what was verified where.

Allowlist snapshots. Seed the allowlists from what GitLab's REST API returned, as snapshot records.

The file is one JSON object, the API responses stored as they came (all pages concatenated):

    {"taken_at": "2025-05-01T00:00:00Z",
     "projects": {"group/app": {"inbound_enabled": true,
                                "allowlist": [<GET /projects/:id/job_token_scope/allowlist items>],
                                "groups_allowlist": [<GET /projects/:id/job_token_scope/groups_allowlist items>]}}}

`inbound_enabled` is `GET /projects/:id/job_token_scope`'s field of that name (optional). Each
project becomes one `sunset_job_token_allowlist_snapshot` record, processed like an event: the
replay reads them before the stream, `sunset stream publish --allowlist-snapshot` sends them to
the worker's input topic.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from streams.audit import (
    ACCESS,
    ALLOWLIST_TYPES,
    AUTH_LOG,
    DOWNLOAD_TYPES,
    GIT_OPERATION,
    JOB_TOKEN_AUTH,
    OWN_TYPES,
    SNAPSHOT,
    VISIBILITY,
    parse_time,
)
from streams.detectors.registry import REGISTRY

# From the detectors (streams.detectors.registry): the types the project stage reads, every type some
# detector names (validated; the rest pass as they are), and the per-type checks they add.
PROJECT_STAGE_TYPES = REGISTRY.project_types
_DETECTOR_TYPES = REGISTRY.read_types
_CHECKS = REGISTRY.checks
_STRINGS = ("author_name", "ip_address", "entity_type", "entity_path")
_DETAILED = ALLOWLIST_TYPES | {GIT_OPERATION, VISIBILITY}  # types whose target and custom_message are read


BOM = b"\xef\xbb\xbf"  # a UTF-8 byte-order mark: some tools start a file with it; JSON does not allow it
MAX_PAYLOAD_BYTES = 25 * 1024 * 1024 + 64 * 1024  # a line or message may hold a streamed body (25 MiB)
MAX_VALUES = 250_000  # JSON values in one payload, counted before parsing: its memory stays bounded
MAX_SNAPSHOT_BYTES = 64 * 1024 * 1024
_LARGE = 64 * 1024  # payloads shorter than this hold too few values to count them


def values_bound(payload: bytes) -> int:
    """An upper bound of the JSON values in `payload`: each value but the first of its container is
    preceded by a comma, each container opens with a bracket (keys count once more). C-speed counts
    over the bytes: a payload is refused before a parser builds millions of objects."""
    return 2 * (payload.count(b",") + payload.count(b"{") + payload.count(b"[") + 1)


@dataclass(frozen=True, slots=True)
class Rejected:
    """An input that cannot be processed, and why; it goes to the dead letters. `element`: its
    index in an array of events (None: the whole payload, or its only event)."""

    reason: str
    element: int | None = None


Read = dict[str, Any] | list["dict[str, Any] | Rejected"]


def read(payload: bytes) -> Read:
    """The one parser of the input, for the replay (a line) and the worker (a message): one JSON
    event or an array of them, each normalized. The common case — one well-formed event — comes
    back as the event itself; anything else as a list with one item per element (an event or a
    `Rejected` with its `element` index; one item for a payload that is not JSON at all)."""
    if len(payload) > _LARGE and (len(payload) > MAX_PAYLOAD_BYTES or values_bound(payload) > MAX_VALUES):
        return [Rejected(too_large(len(payload)))]
    try:
        raw = orjson.loads(payload)
    except orjson.JSONDecodeError as exc:
        if payload.startswith(BOM):
            return read(payload[len(BOM):])
        return [Rejected(f"invalid JSON: {exc}")]
    if type(raw) is dict:
        try:
            event = normalize(raw)
        except Exception as exc:  # noqa: BLE001 - a bug in normalize: this event's dead letter, not a crash
            return [Rejected(internal_error(exc))]
        return event if type(event) is dict else [event]
    if type(raw) is not list:
        return [Rejected("not a JSON object")]
    many = len(raw) > 1
    out: list[dict[str, Any] | Rejected] = []
    for index, item in enumerate(raw):
        event = normalize_safely(item)
        out.append(Rejected(event.reason, index) if isinstance(event, Rejected) and many else event)
    return out


def too_large(size: int) -> str:
    """The dead-letter reason for a payload over `MAX_PAYLOAD_BYTES` bytes or `MAX_VALUES` values."""
    return (f"too large: {size} bytes; at most {MAX_PAYLOAD_BYTES} bytes and {MAX_VALUES} JSON values "
            "in one line or message (put one event, or one page of events, per line)")


def internal_error(exc: BaseException) -> str:
    """The dead-letter reason for an exception sunset did not expect: a bug, said as one, never a crash."""
    return f"internal error: {type(exc).__name__}: {exc}"


def normalize_safely(raw: Any) -> dict[str, Any] | Rejected:
    """`normalize`, with an unexpected exception turned into a rejection (the event goes to the
    dead letters; the rest of the input goes on)."""
    try:
        return normalize(raw)
    except Exception as exc:  # noqa: BLE001 - one event never stops the stream
        return Rejected(internal_error(exc))


def _int(value: Any) -> int | None:
    """An id as GitLab sends it (a number, or its decimal digits); anything else is None: `'²'` is a
    digit to `str.isdigit` but not to `int`, and Python refuses over 4,300 digits."""
    if type(value) is int:
        return value
    if isinstance(value, str) and value.isascii() and value.lstrip("-").isdigit() and len(value) <= 20:
        return int(value)
    return None


def _text(value: Any) -> str | None:
    return value if type(value) is str and value else None


def normalize(raw: Any) -> dict[str, Any] | Rejected:
    """The event normalized *in place* (this runs once per event), or why it cannot be used.

    The fast path takes GitLab's current body as it comes (every field at the top, of its type)
    and gives exactly what `_normalize_any` would; anything else goes the general way.
    """
    try:
        kind, author, name, ip = raw["event_type"], raw["author_id"], raw["author_name"], raw["ip_address"]
        entity, path, pid, created = raw["entity_type"], raw["entity_path"], raw["entity_id"], raw["created_at"]
        ident = raw["id"]
    except (KeyError, TypeError, IndexError):
        return _normalize_any(raw)
    if not (type(raw) is dict and type(kind) is str and kind and kind not in OWN_TYPES and type(author) is int
            and type(name) is str and name and type(ip) is str and ip and type(entity) is str and entity
            and type(path) is str and path and type(pid) is int and type(created) is str):
        return _normalize_any(raw)
    if type(ident) is not str:
        raw["id"] = None if ident is None else str(ident)
    ts = raw["ts"] = parse_time(created)
    if kind not in _DETECTOR_TYPES:  # most events: only the correlation may read them
        raw["download"], raw["pkey"] = False, None
        raw["akey"] = str(author) if author > 0 and entity == "Project" and ts is not None else None
        return raw
    if kind in _DETAILED:
        details = raw.get("details")
        _add_target(raw, details if type(details) is dict else {})
        if kind == GIT_OPERATION and ts is not None:  # a third of all events: `_route` in short
            download = raw["download"] = raw["action"] == "git-upload-pack"
            raw["pkey"] = None
            raw["akey"] = str(author) if author > 0 and (download or entity == "Project") else None
            return raw
    problem = _problem(raw)
    return Rejected(problem) if problem else _route(raw)


def _normalize_any(raw: Any) -> dict[str, Any] | Rejected:
    """Any input: top-level fields first; older streaming bodies, and the REST API's audit events
    (`GET /audit_events`, `/groups/:id/audit_events`, `/projects/:id/audit_events`: the type as
    `event_name`, the rest in `details`, as `API::Entities::AuditEvent` presents them), carry some
    of them only inside `details`; values of the wrong type are converted or dropped."""
    if type(raw) is not dict:
        return Rejected("not a JSON object")
    get = raw.get
    details = get("details")
    if type(details) is not dict:
        details = {}
    event_type = get("event_type")
    if type(event_type) is not str or not event_type:
        event_type = _text(get("event_name")) or _text(details.get("event_name"))
        if event_type is None:
            return Rejected("missing event_type")
        raw["event_type"] = event_type
    if event_type in (AUTH_LOG, SNAPSHOT):
        return _normalize_own(raw, event_type)
    if event_type == ACCESS:
        return Rejected(f"{ACCESS} is sunset's internal record type")
    ident = get("id")
    if type(ident) is not str:
        raw["id"] = None if ident is None else str(ident)
    author = get("author_id")
    if type(author) is not int:
        raw["author_id"] = _int(details.get("author_id") if author is None else author)
    for name in _STRINGS:
        value = get(name)
        if type(value) is not str or not value:
            raw[name] = _text(details.get(name) if value is None else value)
    if type(get("entity_id")) is not int:
        raw["entity_id"] = _int(get("entity_id"))
    raw["ts"] = parse_time(get("created_at"))
    if event_type in _DETAILED:
        _add_target(raw, details)
    problem = _problem(raw)
    return Rejected(problem) if problem else _route(raw)


def _add_target(event: dict[str, Any], details: dict[str, Any]) -> None:
    """Target and `details.custom_message`: a sentence, or for git operations `{protocol, action}`."""
    target_id, target = event.get("target_id"), event.get("target_details")
    event["target_id"] = _int(details.get("target_id") if target_id is None else target_id)
    event["target_details"] = _text(details.get("target_details") if target is None else target)
    message = details.get("custom_message")
    event["action"] = _text(message.get("action")) if isinstance(message, dict) else None
    event["message"] = None if isinstance(message, dict) else _text(message)
    if event["event_type"] == VISIBILITY:
        event["visibility"] = _visibility(details.get("to"), event["message"])


_LEVELS = {"public": "public", "internal": "internal", "private": "private"}
_CHANGED = re.compile(r"^Changed visibility_level from \S+ to (\S+)$")


def _visibility(to: Any, message: str | None) -> str | None:
    """The new level of a `project_visibility_level_updated`: `details.to`, or the message's last word."""
    if not isinstance(to, str):
        match = _CHANGED.match(message or "")
        to = match.group(1) if match else None
    return _LEVELS.get(to.lower()) if isinstance(to, str) else None


def _problem(event: dict[str, Any]) -> str | None:
    """Required fields per event type a detector uses (each detector's `checks` add to the
    common ones); other types pass untouched."""
    kind = event["event_type"]
    if kind not in _DETECTOR_TYPES:
        return None
    if event["ts"] is None:
        return "missing or invalid created_at"
    if event["entity_path"] is None:
        return "missing entity_path"
    checks = _CHECKS.get(kind)
    if checks:
        for check in checks:
            problem = check(event)
            if problem:
                return problem
    return None


def _route(event: dict[str, Any]) -> dict[str, Any]:
    """Decide once where the event goes: `pkey` (project stage) and/or `akey` (actor stage).

    The project stage takes downloads and allowlist changes (key: project path); the actor stage
    takes downloads, job-token logins and any other project event with an IP, for correlation
    (key: author id; anonymous downloads, author -1, belong to nobody).
    """
    kind, author = event["event_type"], event["author_id"]
    download = kind in DOWNLOAD_TYPES or (kind == GIT_OPERATION and event["action"] == "git-upload-pack")
    event["download"] = download
    event["pkey"] = event["entity_path"] if kind in PROJECT_STAGE_TYPES else None
    actor = author is not None and author > 0 and (
        download or kind == JOB_TOKEN_AUTH
        or (event["entity_type"] == "Project" and event["ip_address"] is not None and event["ts"] is not None
            and event["entity_path"] is not None))  # an access needs the project it reached
    event["akey"] = str(author) if actor else None
    return event


def _normalize_own(raw: dict[str, Any], event_type: str) -> dict[str, Any] | Rejected:
    if event_type == AUTH_LOG:
        origin, accessed = _text(raw.get("origin_project")), _text(raw.get("accessed_project"))
        ts = parse_time(raw.get("last_authorized_at"))
        if origin is None or accessed is None or ts is None:
            return Rejected("auth-log record needs origin_project, accessed_project, last_authorized_at")
        return {"event_type": AUTH_LOG, "id": f"authlog:{origin}>{accessed}@{ts}", "ts": ts, "origin": origin,
                "entity_path": accessed, "pkey": accessed, "akey": None}
    project, ts = _text(raw.get("project")), parse_time(raw.get("taken_at"))
    allowlist, groups = raw.get("allowlist"), raw.get("groups_allowlist", [])
    if project is None or ts is None or not isinstance(allowlist, list) or not isinstance(groups, list):
        return Rejected("allowlist snapshot needs project, taken_at, allowlist[] (groups_allowlist[])")
    visibility = raw.get("visibility")
    return {"event_type": SNAPSHOT, "id": None, "ts": ts, "entity_path": project, "allowlist": allowlist,
            "groups_allowlist": groups, "inbound_enabled": raw.get("inbound_enabled"),
            "visibility": _LEVELS.get(visibility) if isinstance(visibility, str) else None,
            "pkey": project, "akey": None}


def compact(event: dict[str, Any]) -> dict[str, Any]:
    """What the worker forwards between its topics: the fields the stages and their detectors read of
    every event, and of an allowlist change also its target and sentence, of a visibility change its
    new level (the rest of GitLab's body is not needed). A dict display: this runs once per event."""
    kind = event["event_type"]
    if kind in (AUTH_LOG, SNAPSHOT):
        return event
    get = event.get
    out = {"event_type": kind, "id": get("id"), "ts": get("ts"), "author_id": get("author_id"),
           "author_name": get("author_name"), "ip_address": get("ip_address"), "entity_path": get("entity_path"),
           "entity_id": get("entity_id"), "download": get("download"), "pkey": get("pkey"), "akey": get("akey")}
    if kind in ALLOWLIST_TYPES:
        out["target_id"], out["target_details"] = get("target_id"), get("target_details")
        out["message"] = get("message")
    elif kind == VISIBILITY:
        out["visibility"] = get("visibility")
    return out



class SnapshotError(ValueError):
    """The snapshot file is not in the documented shape."""


def load_snapshot(path: Path) -> list[dict[str, Any]]:
    """The snapshot file as records, one per project, in file order. It must be a regular file of
    at most `MAX_SNAPSHOT_BYTES` (a device or a FIFO would be read without end)."""
    try:
        if not path.is_file():
            raise SnapshotError(f"{path}: not a regular file")
        with path.open("rb") as handle:
            data = handle.read(MAX_SNAPSHOT_BYTES + 1)
        if len(data) > MAX_SNAPSHOT_BYTES:
            raise SnapshotError(f"{path}: larger than {MAX_SNAPSHOT_BYTES} bytes")
        doc = orjson.loads(data)
    except (OSError, orjson.JSONDecodeError) as exc:
        raise SnapshotError(f"{path}: {exc}") from None
    return snapshot_records(doc, str(path))


def snapshot_records(doc: Any, where: str = "snapshot") -> list[dict[str, Any]]:
    """Validate the snapshot document and turn it into records."""
    if not isinstance(doc, dict) or not isinstance(doc.get("projects"), dict) or not doc.get("taken_at"):
        raise SnapshotError(f"{where}: expected {{\"taken_at\": …, \"projects\": {{path: {{…}}}}}}")
    out = []
    for project, scope in doc["projects"].items():
        if not isinstance(scope, dict) or not isinstance(scope.get("allowlist", []), list):
            raise SnapshotError(f"{where}: projects.{project}: expected an object with an allowlist array")
        out.append({
            "event_type": SNAPSHOT,
            "project": project,
            "taken_at": doc["taken_at"],
            "allowlist": scope.get("allowlist", []),
            "groups_allowlist": scope.get("groups_allowlist", []),
            "inbound_enabled": scope.get("inbound_enabled"),
            "visibility": scope.get("visibility"),
        })
    return out
