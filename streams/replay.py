"""`sunset stream replay`: the detectors offline over a JSONL file, one deterministic JSON document.

Each line holds one event or an array of events. A line that is not JSON, or an element that is
not an object or lacks `event_type`, is a dead letter with its line number; the rest goes on. An
event type no detector uses is counted as ignored. Findings appear once each, in the order they
were first raised, in their final state (a gap's last count and last_seen).
"""

from __future__ import annotations

import gc
import json
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

import orjson

from streams.downloads import tallies
from streams.engine import Engine, Finding
from streams.events import Rejected, normalize, parse_payload
from streams.settings import DetectorSettings


class _Replay:
    """The engine plus what the document needs besides it: findings by id, dead letters."""

    def __init__(self, limits: DetectorSettings) -> None:
        self.engine = Engine(limits)
        self.findings: dict[str, Finding] = {}
        self.dead: list[dict[str, Any]] = []

    def event(self, raw: Any, line: int, where: str = "") -> None:
        event = normalize(raw)
        if isinstance(event, Rejected):
            self.dead.append({"line": line, "reason": where + event.reason})
            return
        new = self.engine.apply(event)
        for finding in new:  # the latest state of each, where it first appeared
            self.findings[finding["id"]] = finding

    def line(self, number: int, line: bytes) -> None:
        """A line that is not one plain JSON object (the common case, handled in `replay_lines`)."""
        payload = parse_payload(line)
        if isinstance(payload, Rejected):
            text = line.strip()
            if text:  # blank lines are allowed; the reason is worded for the line without its newline
                again = parse_payload(text)
                self.dead.append({"line": number, "reason": (again if isinstance(again, Rejected) else payload).reason})
            return
        if len(payload) == 1:
            self.event(payload[0], number)
            return
        for index, raw in enumerate(payload):
            self.event(raw, number, f"element {index}: ")


def _run(replay: _Replay, lines: Iterable[bytes]) -> int:
    """The hot loop, inlined for the common case (one well-formed event per line); the line count."""
    engine, findings, count = replay.engine, replay.findings, 0
    for count, line in enumerate(lines, start=1):
        try:
            raw = orjson.loads(line)
        except orjson.JSONDecodeError:
            raw = None
        event = normalize(raw) if type(raw) is dict else None
        if event is None or isinstance(event, Rejected):
            replay.line(count, line)
            continue
        for finding in engine.apply(event):
            findings[finding["id"]] = finding
    return count


def replay_lines(lines: Iterable[bytes], limits: DetectorSettings,
                 seed: Iterable[dict[str, Any]] = ()) -> dict[str, Any]:
    """Run the engine over `seed` records (line 0), then over the lines; the replay document."""
    replay = _Replay(limits)
    for record in seed:
        replay.event(record, 0, "snapshot: ")
    collecting = gc.isenabled()
    gc.disable()  # the state is dicts and lists of plain values, no cycles: spare the collector's scans
    try:
        count = _run(replay, lines)
    finally:
        if collecting:
            gc.enable()
    engine = replay.engine
    stats = {"lines": count, **engine.stats, "dead_letters": len(replay.dead), "findings": len(replay.findings),
             "projects": len(engine.projects), "users": len(engine.actors)}  # users: tracked at the end
    return {"downloads": tallies(engine.projects), "findings": list(replay.findings.values()),
            "dead_letters": replay.dead, "stats": stats}


def replay_file(path: Path, limits: DetectorSettings, seed: Iterable[dict[str, Any]] = ()) -> dict[str, Any]:
    """The replay document for a file."""
    with path.open("rb") as handle:
        return replay_lines(handle, limits, seed)


def write_json(doc: dict[str, Any], out: IO[str]) -> None:
    """Deterministic output: sorted keys, two-space indent, trailing newline."""
    out.write(json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
