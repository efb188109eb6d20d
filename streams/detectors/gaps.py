"""Detector 3: job-token allowlist gaps — accesses GitLab 18.0 will refuse.

18.0 enforces every project's inbound CI/CD job-token allowlist. An access to project B by
project A's job token (found by `streams.detectors.correlate`, or a row of B's job-token authentication
log) is a gap when A was on neither B's project list nor, through a parent group, its group
list at the access's `created_at` (below). One finding per (A, B) and refusal
episode: it is updated with a count and last_seen while the episode lasts, and reported once
more as `resolved` when A is added. A removal starts a new episode; its finding id ends in
`@<time of the removal>`. A gap judged on an unknown allowlist that a later-arriving change
shows was allowed after all (a removal of an entry never seen added) is reported `withdrawn`.

State: the `allow` (below) and `gaps` keys of one project's value (project
stage), gaps keyed `<source>@<episode start>`. Accesses and auth-log rows are deduplicated by
the stage (`streams.stages`).

The allowlists. Each project's CI/CD job-token inbound allowlists, as they were at any moment.

The state is kept from the `secure_ci_job_token_*` audit events and seeded from the REST API
(`streams.events.load_snapshot`). GitLab delivers in any order, and in the worker an access reaches the
project stage one hop later than the allowlist change next to it, so membership is judged at
the access's `created_at`: every entry keeps its recent changes `[ts, state]` in time order.

State: the `allow` part of one project's value (`new_allowlist()`):

    {"projects": {path: {"id": int|None, "changes": [[ts, state], ...]}},
     "groups": {full path: {...same...}}, "inbound": [enabled, ts] | None,
     "source": "snapshot" | "events" | None}
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from streams.audit import ACCESS, ALLOWLIST_TYPES, AUTH_LOG, DOWNLOAD_TYPES, PUBLIC_DOWNLOAD, SNAPSHOT, VISIBILITY, iso
from streams.detectors.base import (
    NONE,
    Base,
    Event,
    Handler,
    Result,
    Stage,
    State,
    User,
    plural,
    user_dict,
    user_text,
)
from streams.settings import DetectorSettings

REMOVED, ADDED, LISTED = 0, 1, 2  # LISTED: present in a snapshot (standing before it, as far as we know)
MAX_CHANGES = 16
_PROJECT_MSG = re.compile(r"^Project (\S+) was (added to|removed from) inbound list of allowed projects")
_GROUP_MSG = re.compile(r"^Group (\S+) was (added to|removed from) list of allowed groups")
Changes = list[list[Any]]


def new_allowlist() -> dict[str, Any]:
    return {"projects": {}, "groups": {}, "inbound": None, "source": None}


def _entry_name(event: dict[str, Any], pattern: re.Pattern[str]) -> str | None:
    """The full path from GitLab's audit message; `target_details` is only the display name."""
    match = pattern.match(event.get("message") or "")
    if match:
        return match.group(1)
    if event.get("target_details"):
        return str(event["target_details"])
    return None if event.get("target_id") is None else f"id:{event['target_id']}"


def record(entries: dict[str, Any], name: str, ts: float, state: int, ident: int | None) -> None:
    """Add a change in time order (a repeated delivery adds nothing); keep the newest MAX_CHANGES."""
    entry = entries.setdefault(name, {"id": None, "changes": []})
    if ident is not None:
        entry["id"] = ident
    changes: Changes = entry["changes"]
    if [ts, state] in changes:
        return
    bisect.insort(changes, [ts, state])
    del changes[:-MAX_CHANGES]


def is_on(changes: Changes, t: float) -> bool:
    """Was the entry on the allowlist at `t`? Before its first known change: on unless that was an add."""
    if not changes:
        return False
    index = bisect.bisect_right(changes, [t, LISTED + 1])
    if index:
        return bool(changes[index - 1][1] != REMOVED)
    return bool(changes[0][1] != ADDED)


def relevant(allow: dict[str, Any], origin: str, origin_id: int | None) -> list[Changes]:
    """The change lists that can let `origin` in: its own entry (by path or id) and its parent groups."""
    out = [e["changes"] for name, e in allow["projects"].items()
           if name == origin or (origin_id is not None and e["id"] == origin_id)]
    out += [e["changes"] for name, e in allow["groups"].items() if origin.startswith(name + "/")]
    return out


def allowed_at(allow: dict[str, Any], origin: str, origin_id: int | None, t: float) -> bool:
    return any(is_on(changes, t) for changes in relevant(allow, origin, origin_id))


def episode(allow: dict[str, Any], origin: str, origin_id: int | None, t: float) -> tuple[float | None, float | None]:
    """For a refused access at `t`: when the refusal began (the last removal before, None: always)
    and when it ended (the first add or snapshot listing after that, None: still refused)."""
    lists = relevant(allow, origin, origin_id)
    removals = [ts for changes in lists for ts, state in changes if state == REMOVED and ts <= t]
    start = max(removals) if removals else None
    enabling = [ts for changes in lists for ts, state in changes
                if state != REMOVED and (start is None or ts > start) and ts > t]
    return start, (min(enabling) if enabling else None)


def apply_event(allow: dict[str, Any], event: dict[str, Any]) -> None:
    """One `secure_ci_job_token_*` event: an entry added or removed, or the inbound setting changed."""
    kind, ts = event["event_type"], event["ts"]
    allow["source"] = allow["source"] or "events"
    if kind.endswith(("_inbound_enabled", "_inbound_disabled")):
        if allow["inbound"] is None or allow["inbound"][1] <= ts:
            allow["inbound"] = [kind.endswith("_enabled"), ts]
        return
    group = "_group_" in kind
    name = _entry_name(event, _GROUP_MSG if group else _PROJECT_MSG)
    if name is not None:
        record(allow["groups" if group else "projects"], name, ts, ADDED if kind.endswith("_added") else REMOVED,
               event.get("target_id"))


def apply_snapshot(allow: dict[str, Any], event: dict[str, Any]) -> None:
    """`GET …/job_token_scope/allowlist` and `groups_allowlist` at `taken_at`: listed entries are on,
    entries we knew of that are not listed were removed by then."""
    ts = event["ts"]
    listed = {"projects": _snapshot_projects(event["allowlist"]), "groups": _snapshot_groups(event["groups_allowlist"])}
    for part, names in listed.items():
        for name, ident in names.items():
            record(allow[part], name, ts, LISTED, ident)
        for name in [n for n in allow[part] if n not in names]:
            record(allow[part], name, ts, REMOVED, None)
    if isinstance(event.get("inbound_enabled"), bool):
        allow["inbound"] = [event["inbound_enabled"], ts]
    allow["source"] = "snapshot"


def _snapshot_projects(items: list[Any]) -> dict[str, int | None]:
    """Project objects (`BasicProjectDetails`): `path_with_namespace`, `id`."""
    return {str(p["path_with_namespace"]): p.get("id") for p in items
            if isinstance(p, dict) and p.get("path_with_namespace")}


def _snapshot_groups(items: list[Any]) -> dict[str, int | None]:
    """Group objects (`BasicGroupDetails`: id, web_url, name): the full path is in `web_url`."""
    out: dict[str, int | None] = {}
    for g in items:
        if not isinstance(g, dict):
            continue
        path = g.get("full_path") or str(g.get("web_url") or "").partition("/groups/")[2].strip("/")
        if path:
            out[path] = g.get("id")
    return out


POLICY = "job-token-allowlist-enforcement"  # policies/ci/job-token-allowlist-enforcement.yaml
PUBLIC, INTERNAL, PRIVATE, NOT_PUBLIC = "public", "internal", "private", "private_or_internal"
# GitLab's ProjectPolicy: a job token whose project is not on a public or internal project's
# allowlist loses every ability (`public_or_internal & ~project_allowed_for_job_token_by_scope`
# prevents guest to owner access) except, for each feature open to everyone
# (`job_token_access_allowed_to?`), reading its builds' artifacts (`job_token_builds`), packages,
# container images, releases and environments. Of the audit events that can be the request a job
# token made, these are such reads; every other one needs the allowlist.
WITHOUT_ALLOWLIST = {"job_artifact_downloaded": "builds"}


def record_level(levels: Changes, ts: float, level: str) -> None:
    """A project's visibility from `ts` on (a new level only: repeats of the standing one add nothing)."""
    index = bisect.bisect_right(levels, [ts, "~"])
    if index and levels[index - 1][1] == level:
        return
    levels.insert(index, [ts, level])
    del levels[:-MAX_CHANGES]


def level_at(levels: Changes, ts: float) -> str | None:
    """The project's visibility at `ts`, as far as the stream showed it (None: nothing seen before)."""
    index = bisect.bisect_right(levels, [ts, "~"])
    return str(levels[index - 1][1]) if index else None


@dataclass(frozen=True, slots=True)
class JobTokenPublicAccess:
    """Accesses A → B by A's job token, A not on B's allowlist, to a feature GitLab lets any job
    token read on a public or internal project: they need no allowlist entry (info, not a gap)."""

    kind: ClassVar[str] = "job_token_public_access"
    id: str
    source_project: str
    target_project: str
    target_visibility: str
    feature: str
    via: str
    user: User | None
    count: int
    first_seen: str
    last_seen: str
    policy: str | None = None
    severity: ClassVar[str] = "info"

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> JobTokenPublicAccess:
        return cls(data["id"], data["source_project"], data["target_project"], data["target_visibility"],
                   data["feature"], data["via"], User.from_dict(data["user"]), data["count"], data["first_seen"],
                   data["last_seen"])

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "id": self.id, "severity": self.severity, "source_project": self.source_project,
                "target_project": self.target_project, "target_visibility": self.target_visibility,
                "feature": self.feature, "via": self.via, "user": user_dict(self.user), "count": self.count,
                "first_seen": self.first_seen, "last_seen": self.last_seen}

    def describe(self) -> str:
        return (f"{self.source_project} -> {self.target_project} ({self.target_visibility}), "
                f"{plural(self.count, 'access', 'accesses')} {self.first_seen} to {self.last_seen} by "
                f"{user_text(self.user)}: reads {self.feature} ({self.via}), which job tokens may do on a "
                f"{self.target_visibility} project without its allowlist (info)")


def _public_access(value: State, access: Event, level: str, feature: str) -> JobTokenPublicAccess:
    """Count an access that needs no allowlist entry in B's value; its finding."""
    origin, ts = access["origin"], access["ts"]
    seen = value["open_access"].get(origin)
    if seen is None:
        seen = value["open_access"][origin] = {"user": access.get("user"), "count": 0, "first_ts": ts,
                                               "last_ts": ts, "via": access["via"]}
    seen["count"] += 1
    if ts >= seen["last_ts"]:
        seen["last_ts"], seen["via"] = ts, access["via"]
        seen["user"] = access.get("user") or seen["user"]
    seen["first_ts"] = min(seen["first_ts"], ts)
    user = seen["user"]
    return JobTokenPublicAccess(f"job_token_public_access:{origin}>{access['entity_path']}", origin,
                                access["entity_path"], level, feature, seen["via"],
                                User(user["id"], user["name"]) if user else None, seen["count"],
                                iso(seen["first_ts"]), iso(seen["last_ts"]))


@dataclass(frozen=True, slots=True)
class AllowlistGap:
    """Accesses A → B by A's job token while A was not on B's inbound allowlist: refused from 18.0."""

    kind: ClassVar[str] = "job_token_allowlist_gap"
    id: str
    status: str  # open, resolved or withdrawn
    source_project: str
    target_project: str
    user: User | None  # None: known from the authentication log only
    count: int
    first_seen: str
    last_seen: str
    resolved_at: str | None
    evidence: tuple[str, ...]
    allowlist: str
    inbound_enabled: bool | None
    target_visibility: str | None  # at the latest access, as the stream showed it (None: not seen)
    policy: str | None = POLICY

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AllowlistGap:
        return cls(data["id"], data["status"], data["source_project"], data["target_project"],
                   User.from_dict(data["user"]), data["count"], data["first_seen"], data["last_seen"],
                   data["resolved_at"], tuple(data["evidence"]), data["allowlist"], data["inbound_enabled"],
                   data["target_visibility"])

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "id": self.id, "status": self.status, "source_project": self.source_project,
                "target_project": self.target_project, "user": user_dict(self.user), "count": self.count,
                "first_seen": self.first_seen, "last_seen": self.last_seen, "resolved_at": self.resolved_at,
                "evidence": list(self.evidence), "allowlist": self.allowlist, "inbound_enabled": self.inbound_enabled,
                "target_visibility": self.target_visibility}

    def describe(self) -> str:
        status = "open" if self.status == "open" else f"{self.status} at {self.resolved_at}"
        seen = "" if self.target_visibility is None else f"; {self.target_project} was {self.target_visibility}"
        return (f"{self.source_project} -> {self.target_project}, {plural(self.count, 'access', 'accesses')} "
                f"{self.first_seen} to {self.last_seen} by {user_text(self.user)}; {status}; allowlist "
                f"{self.allowlist}{seen}")


def finding(gap: dict[str, Any]) -> AllowlistGap:
    """The finding of a gap's current state; `id` is stable across its updates."""
    suffix = "" if gap["start"] is None else f"@{iso(gap['start'])}"
    user = gap["user"]
    return AllowlistGap(
        f"job_token_allowlist_gap:{gap['source']}>{gap['target']}{suffix}",
        "open" if gap["end"] is None else "withdrawn" if gap["withdrawn"] else "resolved",
        gap["source"], gap["target"], User(user["id"], user["name"]) if user else None, gap["count"],
        iso(gap["first_ts"]), iso(gap["last_ts"]), None if gap["end"] is None else iso(gap["end"]),
        tuple(gap["evidence"]), gap["allowlist"], gap["inbound_enabled"], gap.get("visibility"))


def on_access(value: State, access: Event, limits: DetectorSettings) -> Sequence[Result]:
    """An access A → B (a first delivery) in B's value: a gap's finding if A was not allowed and
    the request needed the allowlist; an info finding if it needed none (`WITHOUT_ALLOWLIST`)."""
    target, origin, ts = access["entity_path"], access["origin"], access["ts"]
    allow = value["allow"]
    if origin == target or allowed_at(allow, origin, access.get("origin_id"), ts):
        return ()
    level = level_at(value["levels"], ts)
    feature = WITHOUT_ALLOWLIST.get(access["via"])
    if feature is not None and level in (PUBLIC, INTERNAL):
        return (_public_access(value, access, level, feature),)
    start, end = episode(allow, origin, access.get("origin_id"), ts)
    key = f"{origin}@{'' if start is None else iso(start)}"
    gap = value["gaps"].get(key)
    if gap is None:
        gap = value["gaps"][key] = _new(target, access, value, start)
    else:
        gap["count"] += 1
        if ts >= gap["last_ts"] and access.get("user"):
            gap["user"] = access["user"]
        gap["first_ts"], gap["last_ts"] = min(gap["first_ts"], ts), max(gap["last_ts"], ts)
        if access["evidence"] not in gap["evidence"]:
            gap["evidence"] = sorted([*gap["evidence"], access["evidence"]])
    gap["end"] = end
    if ts >= gap["last_ts"]:
        gap["visibility"] = level
    return (finding(gap),)


def _new(target: str, access: dict[str, Any], value: dict[str, Any], start: float | None) -> dict[str, Any]:
    inbound = value["allow"]["inbound"]
    return {
        "source": access["origin"], "target": target, "start": start, "end": None, "withdrawn": False,
        "user": access.get("user"), "count": 1, "first_ts": access["ts"], "last_ts": access["ts"],
        "evidence": [access["evidence"]], "allowlist": value["allow"]["source"] or "unknown",
        "inbound_enabled": None if inbound is None else inbound[0], "visibility": None,
    }


def recheck(value: State, ts: float, limits: DetectorSettings) -> list[AllowlistGap]:
    """After an allowlist change at `ts`: open gaps whose source has been let in since are resolved;
    those whose accesses turn out to have been allowed (the change arrived late and reveals the
    earlier state, e.g. a removal of an entry we never saw added) are withdrawn.

    Gaps that ended more than `dedup_ttl` before the change are forgotten (their
    final state was published): the state holds the open gaps and the recently ended ones, not
    every episode ever seen. An access delivered that late to an ended episode opens it again.
    """
    findings: list[AllowlistGap] = []
    allow, gaps = value["allow"], value["gaps"]
    cutoff = ts - limits.dedup_ttl  # the change's own time: downloads, which run ahead, move nothing here
    for key in [k for k, gap in gaps.items() if gap["end"] is not None and gap["end"] < cutoff]:
        del gaps[key]
    for gap in gaps.values():
        if gap["end"] is not None:
            continue
        if allowed_at(allow, gap["source"], None, gap["last_ts"]):
            gap["end"], gap["withdrawn"] = ts, True
        else:
            gap["end"] = episode(allow, gap["source"], None, gap["last_ts"])[1]
        if gap["end"] is not None:
            findings.append(finding(gap))
    return findings


def auth_log_access(record: Event) -> Event:
    """A row of the job-token authentication log is an access with no user attached."""
    return {"event_type": ACCESS, "id": record["id"], "ts": record["ts"], "entity_path": record["entity_path"],
            "pkey": record["entity_path"], "entity_id": None, "origin": record["origin"], "origin_id": None,
            "user": None, "evidence": "auth_log", "via": AUTH_LOG}


def on_download(value: State, event: Event, limits: DetectorSettings) -> Sequence[Result]:
    """A download shows the project's visibility: public, or private or internal (GitLab 17.0 split)."""
    levels, ts = value["levels"], event["ts"]
    level = PUBLIC if event["event_type"] == PUBLIC_DOWNLOAD else NOT_PUBLIC
    if not levels or levels[-1][1] != level or levels[-1][0] > ts:  # the common case, in order: no change
        record_level(levels, ts, level)
    return NONE


def on_event(value: State, event: Event, limits: DetectorSettings) -> Sequence[Result]:
    """An access (or a row of the authentication log), a visibility change, or a change to the allowlist."""
    kind = event["event_type"]
    if kind == ACCESS:
        return on_access(value, event, limits)
    if kind == AUTH_LOG:
        return on_access(value, auth_log_access(event), limits)
    if kind in DOWNLOAD_TYPES:
        return on_download(value, event, limits)
    if kind == VISIBILITY:
        record_level(value["levels"], event["ts"], event["visibility"])
        return NONE
    if kind == SNAPSHOT:
        apply_snapshot(value["allow"], event)
        if event.get("visibility"):
            record_level(value["levels"], event["ts"], event["visibility"])
    else:
        apply_event(value["allow"], event)
    return recheck(value, event["ts"], limits)


def _visibility_check(event: Event) -> str | None:
    return None if event.get("visibility") else "project_visibility_level_updated without its new level"


class AllowlistGaps(Base):
    """Allowlists (events and snapshots) and the accesses judged against them."""

    name = "job_token_allowlist_gaps"
    stage: Stage = "project"
    reads = frozenset({*ALLOWLIST_TYPES, SNAPSHOT, ACCESS, AUTH_LOG, VISIBILITY, *DOWNLOAD_TYPES})
    dedup = frozenset({ACCESS, AUTH_LOG})  # allowlist changes are idempotent by themselves
    checks = {VISIBILITY: _visibility_check}
    settings = ("dedup_ttl",)
    findings = (AllowlistGap, JobTokenPublicAccess)

    def state(self) -> State:
        return {"allow": new_allowlist(), "gaps": {}, "levels": [], "open_access": {}}

    def on_event(self, state: State, event: Event, settings: DetectorSettings) -> Sequence[Result]:
        return on_event(state, event, settings)

    def handler(self, kind: str) -> Handler:
        """The function itself for the frequent types: one frame less."""
        return on_access if kind == ACCESS else on_download if kind in DOWNLOAD_TYPES else on_event

    def open_findings(self, state: State) -> Iterable[AllowlistGap]:
        return [finding(gap) for gap in state["gaps"].values() if gap["end"] is None]


ALLOWLIST_GAPS = AllowlistGaps()
