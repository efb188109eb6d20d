"""`sunset stream replay`: the detectors offline over a JSONL file, one deterministic document.

Each line holds one event or an array of events. A line that is not JSON, or an element that is
not an object or lacks `event_type`, is a dead letter with its line number; the rest goes on. An
event type no detector uses is counted as ignored. Findings appear once each, in the order they
were first raised, in their final state (a gap's last count and last_seen).

`Engine` runs both stages in one process over dicts, by the worker's event-time rules over one
input (`streams.eventtime`). The JSON document (`write_json`) is the contract; `write_text` is a
reading of it for a person at a terminal: the counts, the download totals across the 17.0 split,
every finding on one line, the dead letters.
"""

from __future__ import annotations

import gc
import json
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from streams.audit import DOWNLOAD, PUBLIC_DOWNLOAD, SNAPSHOT, iso
from streams.detectors.base import Event, Finding
from streams.detectors.base import plural as _n
from streams.detectors.downloads import tallies
from streams.detectors.registry import REGISTRY, Registry
from streams.events import MAX_PAYLOAD_BYTES, Rejected, internal_error, normalize_safely, read, too_large
from streams.eventtime import FIRST, Holding, as_of, order_key
from streams.settings import DetectorSettings
from streams.stages import DUPLICATE, NOTHING, actor_stage, idle_actors, project_stage


class Engine:
    """Both stages over dicts, in one process: the offline replay and the unit tests.

    It follows the worker's event-time rules (`streams.eventtime`) over one input: an event is
    held until the watermark — the newest event time read minus the allowed lateness — passes
    it; then the actor stage applies what it releases, in order, and the project stage what it
    releases (the accesses just produced included). An event behind the watermark is late: it is
    applied as of the watermark (`as_of`). `finish()` releases the rest at the end.
    """

    def __init__(self, limits: DetectorSettings, registry: Registry = REGISTRY) -> None:
        self.limits = limits
        self.registry = registry
        self.projects: dict[str, Any] = {}
        self.actors: dict[str, Any] = {}
        self.events = self.duplicates = self.ignored = self.expired = self.late = 0
        self.sweep_at = float("-inf")  # event time of the next sweep of idle users
        self.mark = FIRST  # the watermark: held events before it are applied
        self.newest = FIRST
        self.seq = 0  # arrival number: breaks the ties order_key leaves (repeated deliveries)
        self.held_actors = Holding()
        self.held_projects = Holding()
        self.errors: list[tuple[Any, BaseException]] = []  # (tag of the event, what it raised)
        self.late_events: list[tuple[Any, Event]] = []  # (tag, event): applied as of the watermark

    @property
    def stats(self) -> dict[str, int]:
        return {"events": self.events, "duplicates": self.duplicates, "ignored": self.ignored,
                "late": self.late, "users_expired": self.expired}

    def sweep(self, now: float) -> None:
        """Forget users idle past the horizon; run once per horizon of event time (amortized O(1) an event)."""
        for key in idle_actors(self.actors.items(), now, self.limits, self.registry):
            del self.actors[key]
            self.expired += 1
        self.sweep_at = now + self.registry.horizon(self.limits)

    def apply(self, event: Event) -> list[dict[str, Any]]:
        """One normalized event in; the findings released by it, as the JSON dicts that are
        published (`step` gives the records; `finish` what is still held at the end)."""
        return [finding.as_dict() for finding in self.step(event)]

    def step(self, event: Event, tag: Any = None) -> list[Finding]:
        """Hold one normalized event, move the watermark, and apply what it passed; the findings.

        An exception a detector raises is kept in `errors` with the event's `tag` (the replay's
        line number), and the rest goes on."""
        self.events += 1
        p_key, a_key = event["pkey"], event["akey"]
        if p_key is None and a_key is None:
            self.ignored += 1
            return NOTHING.findings
        kind, ident = event["event_type"], event["id"]  # order_key, inline: this runs for every event
        ts = FIRST if kind == SNAPSHOT else event["ts"]
        if ts < self.mark and ts != FIRST:  # late: applied as of the watermark
            ts = as_of(event, self.mark)
            self.late += 1
            self.late_events.append((tag, event))
        self.seq += 1
        entry = (ts, kind, "" if ident is None else str(ident), self.seq, event, tag)
        if p_key is not None:
            self.held_projects.add(entry)
        if a_key is not None:
            self.held_actors.add(entry)
        # a snapshot's time (taken_at, FIRST in order_key) is not stream time: it moves no watermark
        if ts > self.newest:
            self.newest = ts
            self.mark = max(self.mark, ts - self.limits.allowed_lateness)
        elif ts >= self.mark:  # the watermark stayed, and the last release left nothing before it
            return NOTHING.findings
        return self.release(self.mark)

    def finish(self) -> list[Finding]:
        """The end of the input: everything held is applied."""
        self.mark = max(self.mark, self.newest)
        return self.release(float("inf"))

    def release(self, mark: float) -> list[Finding]:
        """Apply the held events before `mark`: the actor stage's first (its accesses join
        the project stage's held events), then the project stage's; each in `order_key` order."""
        findings: list[Finding] = []
        limits, registry, projects, errors = self.limits, self.registry, self.held_projects, self.errors
        due = self.held_actors.due(mark)
        actors = self.actors
        for entry in due:
            try:
                result = actor_stage(actors, entry[4], limits, registry)
            except Exception as exc:  # noqa: BLE001 - one event never stops the others
                errors.append((entry[5], exc))
                continue
            if result is not NOTHING:
                findings += result.findings
                for access in result.accesses:
                    self.seq += 1
                    projects.add((*order_key(access), self.seq, access, entry[5]))
        if due and self.mark >= self.sweep_at:  # after them: what is held now is after the watermark
            self.sweep(self.mark)
        states = self.projects
        for entry in projects.due(mark):
            try:
                result = project_stage(states, entry[4], limits, registry)
            except Exception as exc:  # noqa: BLE001 - one event never stops the others
                errors.append((entry[5], exc))
                continue
            if result is DUPLICATE:
                self.duplicates += 1
            elif result.findings:
                findings += result.findings
        return findings


Dead = list[dict[str, Any]]


def dead_letter(number: int, line: bytes, rejected: Rejected) -> dict[str, Any] | None:
    """The dead letter of a line (or of one element of its array); None for a blank line."""
    reason = rejected.reason
    if type(line) is Overlong:
        return {"line": number, "reason": too_large(line.size)}
    if rejected.element is not None:
        return {"line": number, "reason": f"element {rejected.element}: {reason}"}
    if reason.startswith("invalid JSON"):
        text = line.strip()
        if not text:
            return None  # blank lines are allowed
        again = read(text)  # the reason worded for the line without its newline
        if type(again) is list and len(again) == 1 and isinstance(again[0], Rejected):
            reason = again[0].reason
    return {"line": number, "reason": reason}


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

    def run(self, lines: Iterable[bytes]) -> None:
        """The hot loop: each line's events (`streams.events.read`, numbered from 1) into the engine;
        what cannot be used goes to the dead letters. An exception a detector did not expect makes
        the event that raised it a dead letter (`internal error: …`, with its line), like the
        worker does; the rest goes on."""
        step, findings, dead, number = self.engine.step, self.findings, self.dead, 0
        for number, line in enumerate(lines, start=1):  # noqa: B007 - counted below
            got = read(line)
            if type(got) is dict:
                for finding in step(got, number):
                    findings[finding.id] = finding
                continue
            for item in got:
                if type(item) is dict:
                    for finding in step(item, number):
                        findings[finding.id] = finding
                elif (letter := dead_letter(number, line, item)) is not None:  # type: ignore[arg-type]
                    dead.append(letter)
        self.lines = number

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
        late = [{"line": tag, "id": event["id"], "event_type": event["event_type"], "created_at": iso(event["late"]),
                 "applied_as_of": iso(event["ts"])} for tag, event in engine.late_events]
        return {"downloads": tallies(engine.projects), "findings": findings,
                "dead_letters": self.dead, "late": late, "stats": stats}


@contextmanager
def _no_gc() -> Iterator[None]:
    """The state is dicts and lists of plain values, no cycles: spare the collector's scans — and,
    after, its one long scan of everything allocated meanwhile (`gc.freeze`: never scanned again;
    reference counting still frees it)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if collecting:
            gc.enable()


def replay_lines(lines: Iterable[bytes], limits: DetectorSettings,
                 seed: Iterable[dict[str, Any]] = (), registry: Registry = REGISTRY) -> dict[str, Any]:
    """Run the engine over `seed` records (line 0), then over the lines; the replay document."""
    replay = _Replay(limits, seed, registry)
    with _no_gc():
        replay.run(lines)
        replay.finish()
    replay.dead.sort(key=lambda dead: int(dead["line"]))  # by line, whenever the event was applied
    return replay.document()


class Overlong(bytes):
    """A line longer than `MAX_PAYLOAD_BYTES`, read no further (it parses as nothing: a dead letter)."""

    size: int


_CHUNK = 1024 * 1024


def bounded_lines(handle: IO[bytes]) -> Iterator[bytes]:
    """The lines of a binary stream, each at most `MAX_PAYLOAD_BYTES` long in memory: a longer one
    is skipped to its end in chunks and comes back as an empty `Overlong` with its size."""
    readline = handle.readline
    while line := readline(_CHUNK):
        if len(line) < _CHUNK or line.endswith(b"\n"):
            yield line  # nearly every line: one read
            continue
        parts, size = [line], len(line)
        while size <= MAX_PAYLOAD_BYTES and (part := readline(_CHUNK)):
            parts.append(part)
            size += len(part)
            if part.endswith(b"\n"):
                break
        if size <= MAX_PAYLOAD_BYTES:
            yield b"".join(parts)
            continue
        del parts, line
        while not part.endswith(b"\n") and (part := readline(_CHUNK)):
            size += len(part)
        overlong = Overlong()
        overlong.size = size
        yield overlong


def replay_file(path: Path, limits: DetectorSettings, seed: Iterable[dict[str, Any]] = ()) -> dict[str, Any]:
    """The replay document for a file."""
    with path.open("rb") as handle:
        return replay_lines(bounded_lines(handle), limits, seed)


def write_json(doc: dict[str, Any], out: IO[str]) -> None:
    """Deterministic output: sorted keys, two-space indent, trailing newline."""
    out.write(json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


# Characters a terminal acts on instead of showing: C0 and C1 controls, DEL, and the Unicode
# format characters that reorder text (bidi overrides, isolates and marks) or hide it.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]")


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe(text: str) -> str:
    """`text` with every character a terminal would act on written as an escape (`\\x1b`, `\\u202e`)."""
    return _UNSAFE.sub(_escaped, text)


def write_text(doc: dict[str, Any], out: IO[str]) -> None:
    """The document for a person at a terminal; every value from the events is escaped (`safe`)."""
    stats, downloads = doc["stats"], doc["downloads"]
    out.write(f"Replayed {_n(stats['lines'], 'line')}: {_n(stats['events'], 'event')} "
              f"({_n(stats['duplicates'], 'repeated delivery', 'repeated deliveries')} counted once, "
              f"{stats['ignored']} of types no detector reads), {_n(stats['dead_letters'], 'dead letter')}.\n")
    private = sum(d[DOWNLOAD] for d in downloads.values())
    public = sum(d[PUBLIC_DOWNLOAD] for d in downloads.values())
    out.write(f"Downloads: {private + public} in {_n(len(downloads), 'project')} "
              f"({DOWNLOAD} {private}, {PUBLIC_DOWNLOAD} {public}).\n")
    findings = doc["findings"]
    out.write(f"\nFindings ({len(findings)}):\n" if findings else "\nNo findings.\n")
    for finding in findings:
        out.write(safe(f"  {finding['kind']}: {REGISTRY.finding(finding).describe()}") + "\n")
    late = doc.get("late", [])
    if late:
        out.write(f"\nLate, applied as of the watermark when they arrived ({len(late)}):\n")
        for event in late:
            out.write(safe(f"  line {event['line']}: {event['event_type']} {event['id']} of {event['created_at']}, "
                           f"applied as of {event['applied_as_of']}") + "\n")
    if doc["dead_letters"]:
        out.write(f"\nDead letters ({len(doc['dead_letters'])}):\n")
        for dead in doc["dead_letters"]:
            out.write(safe(f"  line {dead['line']}: {dead['reason']}") + "\n")
