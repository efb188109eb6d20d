"""THE list of stream detectors, and the tables the stages and the validation are built from.

Add a detector: write its module in `streams/detectors/` (a `streams.detectors.base.Detector`), add
it to `DETECTORS`, and add its settings fields, if any, to `streams.settings.DetectorSettings`. Its event types are then
routed, validated and dispatched; its findings reach the topic, the replay, the report and the
views. Order matters only between detectors of one stage that read the same event type: they
run in list order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

from streams.audit import ACCESS
from streams.detectors.base import ANY, Check, Detector, Finding, Handler, Stage, State
from streams.detectors.correlate import JOB_TOKEN_CORRELATION
from streams.detectors.downloads import TALLIES
from streams.detectors.gaps import ALLOWLIST_GAPS
from streams.detectors.massdownload import MASS_DOWNLOAD
from streams.settings import DetectorSettings

DETECTORS: tuple[Detector, ...] = (TALLIES, ALLOWLIST_GAPS, MASS_DOWNLOAD, JOB_TOKEN_CORRELATION)

# The stages' own keys of a value: the dedup record's, the source coordinates applied (`src`) and
# those pending below them (`pend`; streams.worker.agents).
STAGE_KEYS: dict[Stage, tuple[str, ...]] = {"project": ("seen", "clock", "pruned", "ordered", "src", "pend"),
                                            "actor": ("src", "pend")}


def new_record() -> dict[str, Any]:
    """The dedup record's keys of an empty project value (`streams.stages.remember`)."""
    return {"seen": {}, "clock": 0.0}


class Route(NamedTuple):
    """What one event type does in one stage: dedup by id first (project stage), then the
    detectors' handlers, in list order."""

    handlers: tuple[Handler, ...]  # the detectors' on_event, looked up once
    dedup: bool
    detectors: tuple[Detector, ...]

    @classmethod
    def of(cls, kind: str, dedup: bool, detectors: Sequence[Detector]) -> Route:
        return cls(tuple(d.handler(kind) for d in detectors), dedup, tuple(detectors))


NOWHERE = Route((), False, ())  # a type no detector of the stage reads


class Registry:
    """Dispatch tables, state shapes and validation data for a list of detectors."""

    def __init__(self, detectors: Iterable[Detector]) -> None:
        self.detectors = tuple(detectors)
        self.project_detectors = tuple(d for d in self.detectors if d.stage == "project")
        self.actor_detectors = tuple(d for d in self.detectors if d.stage == "actor")
        _check(self.detectors)
        self.project, self.project_default = _table(self.project_detectors)
        self.actor, self.actor_default = _table(self.actor_detectors)
        # What the stages read per event: the same as plain tuples (handlers as a list, dedup) —
        # CPython 3.11 unpacks an exact tuple and iterates a list on its fast paths, not a
        # NamedTuple or a tuple. Never mutated.
        # Types the project stage reads (`pkey` is set for them), and every type some detector names.
        self.project_types = frozenset().union(*(d.reads for d in self.project_detectors)) - {ANY}
        self.read_types = frozenset().union(*(d.reads for d in self.detectors)) - {ANY}
        # Project types no access can affect (none of their readers reads accesses): the worker
        # releases them without waiting for the actor stage (streams.eventtime).
        self.project_early = frozenset(
            kind for kind in self.project_types
            if not any(ACCESS in d.reads or ANY in d.reads for d in self.project.get(kind, NOWHERE).detectors))
        # The second item: the dedup record's lane (streams.stages.remember), "" for no dedup.
        # Each dedup lane is a record of its own (streams.stages.remember): the early types' ids in
        # the value itself, the others' in `ordered` — or in the value too when nothing is early.
        self.project_calls = {kind: _calls(route, kind in self.project_early or not self.project_early)
                              for kind, route in self.project.items()}
        self.project_other = _calls(self.project_default, False)
        self.actor_calls = {kind: _calls(route, False) for kind, route in self.actor.items()}
        self.actor_other = _calls(self.actor_default, False)
        checks: dict[str, list[Check]] = {}  # lists: iterated per event (see `project_calls`)
        for detector in self.detectors:
            for kind, check in detector.checks.items():
                checks.setdefault(kind, []).append(check)
        self.checks = checks
        self.kinds: dict[str, type[Finding]] = {cls.kind: cls for d in self.detectors for cls in d.findings}
        self._project_parts = [new_record, *(d.state for d in self.project_detectors)]
        self._actor_parts = [d.state for d in self.actor_detectors] or [dict]
        self._active = [d.active_since for d in self.actor_detectors]

    def new_project(self) -> State:
        """An empty project value: the dedup record and each project detector's part."""
        return _union(self._project_parts)

    def new_actor(self) -> State:
        """An empty user value: each actor detector's part."""
        return _union(self._actor_parts)

    def horizon(self, settings: DetectorSettings) -> float:
        """Event time after which an idle user's value can no longer change a result."""
        return max((d.horizon(settings) for d in self.actor_detectors), default=0.0)

    def idle(self, value: State, cutoff: float) -> bool:
        """Whether no actor detector's part of `value` records anything at or after `cutoff`."""
        for active in self._active:  # noqa: SIM110 - it runs for every user at a sweep: no generator
            if active(value, cutoff):
                return False
        return True

    def finding(self, data: dict[str, Any]) -> Finding:
        """A finding's JSON dict back as its record."""
        return self.kinds[data["kind"]].from_dict(data)


def _calls(route: Route, early: bool) -> tuple[list[Handler], str]:
    return list(route.handlers), ("seen" if early else "ordered") if route.dedup else ""


def _union(parts: list[Callable[[], State]]) -> State:
    value: State = {}
    for part in parts:
        value.update(part())
    return value


def _table(detectors: Sequence[Detector]) -> tuple[dict[str, Route], Route]:
    """Event type → Route, and the Route of every other type (the ANY readers, if any)."""
    def route(kind: str) -> Route:
        readers = [d for d in detectors if kind in d.reads or ANY in d.reads]
        return Route.of(kind, any(kind in d.dedup for d in readers), readers)

    types = sorted({kind for d in detectors for kind in d.reads} - {ANY})
    default = [d for d in detectors if ANY in d.reads]
    return {kind: route(kind) for kind in types}, Route.of(ANY, False, default) if default else NOWHERE


def _check(detectors: Sequence[Detector]) -> None:
    """A list that cannot work is refused when it is built, not at the first event."""
    names = [d.name for d in detectors]
    if len(set(names)) != len(names):
        raise ValueError(f"detector names repeat: {names}")
    for stage in ("project", "actor"):
        owned: dict[str, str] = dict.fromkeys(STAGE_KEYS[stage], f"the {stage} stage")
        for detector in (d for d in detectors if d.stage == stage):
            if detector.dedup and stage != "project":
                raise ValueError(f"{detector.name}: only the project stage deduplicates by id")
            for key in detector.state():
                if key in owned:
                    raise ValueError(f"{detector.name}: state key {key!r} is already {owned[key]}'s")
                owned[key] = detector.name
    kinds = [cls.kind for d in detectors for cls in d.findings]
    if len(set(kinds)) != len(kinds):
        raise ValueError(f"finding kinds repeat: {kinds}")


REGISTRY = Registry(DETECTORS)
