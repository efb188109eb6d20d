"""`sunset stream replay`: the detectors offline over a JSONL file, one deterministic JSON document.

Each line holds one event or an array of events. A line that is not JSON, or an element that is
not an object or lacks `event_type`, is a dead letter with its line number; the rest goes on. An
event type no detector uses is counted as ignored. Findings appear once each, in the order they
were first raised, in their final state (a gap's last count and last_seen).
"""

from __future__ import annotations

import gc
import json
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import orjson

from streams.downloads import tallies
from streams.engine import Engine
from streams.events import Rejected, internal_error, normalize, normalize_safely, parse_payload
from streams.findings import Finding
from streams.registry import REGISTRY, Registry
from streams.settings import DetectorSettings

Dead = list[dict[str, Any]]


def _line(number: int, line: bytes, dead: Dead) -> list[dict[str, Any]]:
    """A line that is not one well-formed event (the common case is handled in `_Parser.events`): its
    events, and a dead letter for each part that cannot be used."""
    payload = parse_payload(line)
    if isinstance(payload, Rejected):
        text = line.strip()
        if text:  # blank lines are allowed; the reason is worded for the line without its newline
            again = parse_payload(text)
            dead.append({"line": number, "reason": (again if isinstance(again, Rejected) else payload).reason})
        return []
    out = []
    for index, raw in enumerate(payload):
        event = normalize_safely(raw)
        if isinstance(event, Rejected):
            where = f"element {index}: " if len(payload) > 1 else ""
            dead.append({"line": number, "reason": where + event.reason})
        else:
            out.append(event)
    return out


class _Parser:
    """Lines to normalized events; what cannot be used goes to `dead`; `lines` counts them."""

    def __init__(self) -> None:
        self.dead: Dead = []
        self.lines = 0
        self.at = 0  # the line of the event last yielded

    def events(self, lines: Iterable[bytes]) -> Iterator[dict[str, Any]]:
        """The normalized events of `lines`, numbered from 1, in order; the common case (one
        well-formed event per line) inline."""
        dead, number = self.dead, 0
        for number, line in enumerate(lines, start=1):  # noqa: B007 - counted below
            self.at = number
            try:
                raw = orjson.loads(line)
                event = normalize(raw) if type(raw) is dict else None
            except Exception:  # noqa: BLE001 - not JSON, or a normalize bug: `_line` says which
                event = None
            if type(event) is dict:
                yield event
            else:
                yield from _line(number, line, dead)
        self.lines = number


class _Replay:
    """The engine plus what the document needs besides it: findings by id, dead letters."""

    def __init__(self, limits: DetectorSettings, seed: Iterable[dict[str, Any]], registry: Registry) -> None:
        self.engine = Engine(limits, registry)
        self.findings: dict[str, Finding] = {}
        self.dead: Dead = []
        self.lines = 0
        for record in seed:  # line 0
            event = normalize_safely(record)
            if isinstance(event, Rejected):
                self.dead.append({"line": 0, "reason": "snapshot: " + event.reason})
            else:
                self.apply(event)

    def apply(self, event: dict[str, Any]) -> None:
        for finding in self.engine.step(event, 0):  # the latest state of each, where it first appeared
            self.findings[finding.id] = finding

    def run(self, parser: _Parser, lines: Iterable[bytes]) -> None:
        """The hot loop. An exception a detector did not expect makes the event that raised it a
        dead letter (`internal error: …`, with its line), like the worker does; the rest goes on."""
        step, findings = self.engine.step, self.findings
        for event in parser.events(lines):
            for finding in step(event, parser.at):
                findings[finding.id] = finding

    def finish(self) -> None:
        """The end of the input: what the watermark still held is applied."""
        for finding in self.engine.finish():
            self.findings[finding.id] = finding
        for tag, exc in self.engine.errors:
            reason = internal_error(exc)
            self.dead.append({"line": tag, "reason": ("snapshot: " + reason) if tag == 0 else reason})

    def document(self) -> dict[str, Any]:
        engine = self.engine
        stats = {"lines": self.lines, **engine.stats, "dead_letters": len(self.dead),
                 "findings": len(self.findings), "projects": len(engine.projects),
                 "users": len(engine.actors)}  # users: still tracked at the end
        findings = [finding.as_dict() for finding in self.findings.values()]  # the records' JSON, here
        return {"downloads": tallies(engine.projects), "findings": findings,
                "dead_letters": self.dead, "stats": stats}


@contextmanager
def _no_gc() -> Iterator[None]:
    """The state is dicts and lists of plain values, no cycles: spare the collector's scans."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def replay_lines(lines: Iterable[bytes], limits: DetectorSettings,
                 seed: Iterable[dict[str, Any]] = (), registry: Registry = REGISTRY) -> dict[str, Any]:
    """Run the engine over `seed` records (line 0), then over the lines; the replay document."""
    replay, parser = _Replay(limits, seed, registry), _Parser()
    with _no_gc():
        replay.run(parser, lines)
        replay.finish()
    replay.dead += parser.dead
    replay.dead.sort(key=lambda dead: int(dead["line"]))  # by line, whenever the event was applied
    replay.lines = parser.lines
    return replay.document()


def replay_file(path: Path, limits: DetectorSettings, seed: Iterable[dict[str, Any]] = ()) -> dict[str, Any]:
    """The replay document for a file."""
    with path.open("rb") as handle:
        return replay_lines(handle, limits, seed)


def write_json(doc: dict[str, Any], out: IO[str]) -> None:
    """Deterministic output: sorted keys, two-space indent, trailing newline."""
    out.write(json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
