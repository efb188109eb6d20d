"""Each project's CI/CD job-token inbound allowlists, as they were at any moment.

The state is kept from the `secure_ci_job_token_*` audit events and seeded from the REST API
(`streams.snapshot`). GitLab delivers in any order, and in the worker an access reaches the
project stage one hop later than the allowlist change next to it, so membership is judged at
the access's `created_at`: every entry keeps its recent changes `[ts, state]` in time order.

State: the `allow` part of one project's value (`new_allowlist()`, owned by `streams.gaps`):

    {"projects": {path: {"id": int|None, "changes": [[ts, state], ...]}},
     "groups": {full path: {...same...}}, "inbound": [enabled, ts] | None,
     "source": "snapshot" | "events" | None}
"""

from __future__ import annotations

import bisect
import re
from typing import Any

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
