"""The floor of `sunset stream replay`: a minimal hand-written loop with the replay's semantics.

One function, no registry, no engine object, no parser object: each line is `orjson.loads`-ed and
normalized (`streams.events.normalize`, the validation is the semantics), held in buckets of whole
seconds, released when the watermark moves, and handed to the detectors' own functions by an
if/else on its type; idle users are swept at the same points. What the replay adds on top — the
registry's dispatch tables, the stage functions, the holding and parser objects, dead letters,
internal-error guards — is what the ratio replay / floor measures. It handles what the bench's
input holds (well-formed events, no snapshot, no late event, no bad line) and raises otherwise;
`bench/stream_bench.py` checks its document equal to the replay's before printing any speed.
"""

from __future__ import annotations

import gc
import heapq
from bisect import bisect_left
from math import floor
from operator import itemgetter
from pathlib import Path
from typing import Any

import orjson

from streams.audit import ACCESS, ALLOWLIST_TYPES, DOWNLOAD_TYPES, JOB_TOKEN_AUTH, VISIBILITY
from streams.detectors.correlate import on_job_token_auth, on_project_event
from streams.detectors.downloads import count, tallies
from streams.detectors.gaps import on_access, on_download, on_event
from streams.detectors.massdownload import record
from streams.detectors.registry import REGISTRY
from streams.events import normalize
from streams.settings import DetectorSettings
from streams.stages import remember

_time = itemgetter(0)


def _hold(buckets: dict[float, list[Any]], numbers: list[float], entry: Any) -> None:
    number = floor(entry[0])
    bucket = buckets.get(number)
    if bucket is None:
        buckets[number] = [entry]
        heapq.heappush(numbers, number)
    else:
        bucket.append(entry)


def _due(buckets: dict[float, list[Any]], numbers: list[float], upto: float) -> list[Any]:
    out: list[Any] = []
    while numbers and numbers[0] < upto:
        bucket = buckets[numbers[0]]
        bucket.sort()
        if bucket[-1][0] < upto:
            out += bucket
            del buckets[heapq.heappop(numbers)]
            continue
        cut = bisect_left(bucket, upto, key=_time)
        out += bucket[:cut]
        del bucket[:cut]
        break
    return out


def floor_replay(path: Path, limits: DetectorSettings) -> dict[str, Any]:  # noqa: C901, PLR0915 - one loop, on purpose
    projects: dict[str, Any] = {}
    actors: dict[str, Any] = {}
    findings: dict[str, Any] = {}
    held_a: tuple[dict[float, list[Any]], list[float]] = ({}, [])
    held_p: tuple[dict[float, list[Any]], list[float]] = ({}, [])
    lateness, horizon = limits.allowed_lateness, REGISTRY.horizon(limits)
    new_project, new_actor, idle = REGISTRY.new_project, REGISTRY.new_actor, REGISTRY.idle
    stats = {"events": 0, "duplicates": 0, "ignored": 0, "users_expired": 0, "seq": 0}
    newest = mark = sweep_at = float("-inf")

    def release(upto: float) -> None:
        nonlocal sweep_at
        actor_due = _due(*held_a, upto)
        for entry in actor_due:
            event = entry[4]
            value = actors.get(event["akey"])
            if value is None:
                value = actors[event["akey"]] = new_actor()
            if event["event_type"] == JOB_TOKEN_AUTH:
                accesses: Any = on_job_token_auth(value, event, limits)
            else:
                for found in record(value, event, limits):
                    findings[found.id] = found
                accesses = on_project_event(value, event, limits)
            for access in accesses:
                stats["seq"] += 1
                _hold(*held_p, (access["ts"], ACCESS, access["id"] or "", stats["seq"], access))
        if actor_due and mark >= sweep_at:
            for key in [key for key, value in actors.items() if idle(value, mark - horizon)]:
                del actors[key]
                stats["users_expired"] += 1
            sweep_at = mark + horizon
        for entry in _due(*held_p, upto):
            event = entry[4]
            value = projects.get(event["pkey"])
            if value is None:
                value = projects[event["pkey"]] = new_project()
            kind = event["event_type"]
            if kind in DOWNLOAD_TYPES or kind == ACCESS:
                if event["id"] is not None and not remember(value, event["id"], event["ts"], limits):
                    stats["duplicates"] += 1
                    continue
                if kind == ACCESS:
                    out: Any = on_access(value, event, limits)
                else:
                    out = count(value, event, limits)
                    on_download(value, event, limits)
            elif kind in ALLOWLIST_TYPES or kind == VISIBILITY:
                out = on_event(value, event, limits)
            else:
                raise ValueError(f"the floor does not handle {kind}")
            for found in out:
                findings[found.id] = found

    lines = 0
    gc.disable()
    try:
        with path.open("rb") as handle:
            for line in handle:
                lines += 1
                event = normalize(orjson.loads(line))
                if type(event) is not dict:
                    raise ValueError(f"line {lines}: the floor handles well-formed events only")
                stats["events"] += 1
                p_key, a_key = event["pkey"], event["akey"]
                if p_key is None and a_key is None:
                    stats["ignored"] += 1
                    continue
                ts, ident = event["ts"], event["id"]
                if ts < mark:
                    raise ValueError(f"line {lines}: the floor handles no late event")
                stats["seq"] += 1
                entry = (ts, event["event_type"], "" if ident is None else ident, stats["seq"], event)
                if p_key is not None:
                    _hold(*held_p, entry)
                if a_key is not None:
                    _hold(*held_a, entry)
                if ts > newest:
                    newest = ts
                    if ts - lateness > mark:
                        mark = ts - lateness
                        release(mark)
        mark = max(mark, newest)
        release(float("inf"))
    finally:
        gc.freeze()
        gc.enable()
    del stats["seq"]
    return {"downloads": tallies(projects), "findings": [f.as_dict() for f in findings.values()],
            "dead_letters": [], "late": [],
            "stats": {"lines": lines, **stats, "late": 0, "dead_letters": 0, "findings": len(findings),
                      "projects": len(projects), "users": len(actors)}}
