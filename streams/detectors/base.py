"""What a stream detector is, and what it raises. The detectors are listed in
`streams.detectors.registry`.

A detector runs in one stage — `project` (key: project path) or `actor` (key: author id) — and
owns some keys of that stage's value (`state()` gives them empty; the stage's value is the union
of its detectors' parts and, in the project stage, the dedup record of `streams.stages`). The
stage looks the event type up in a table built from the list and calls `on_event` of each
detector that reads it, in list order, with the whole value: a detector writes only its own
keys, and may read the stage's `clock` and the parts of detectors it is built on.

`on_event` returns findings (`Finding` records) and, in the actor stage only, plain dicts:
records for the project stage (routed by their `pkey`; the job-token accesses). It runs once per
event: return a shared empty tuple when there is nothing, allocate nothing.

A finding is a frozen record, turned into its JSON dict only at the output edges (the findings
topic, the replay document, the text report, the worker's views). Every record has `kind` (a
class constant), `id` (stable across a finding's updates: the findings topic's key), `policy`
(the scanner policy id, `policies/<group>/<id>.yaml`, that the finding is the runtime evidence
of, or None), `as_dict()` (the published JSON; `policy` is not in it), `from_dict()` (its
inverse, for dicts read back from state or a document) and `describe()` (one line of text).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Protocol

from streams.settings import DetectorSettings


class Finding(Protocol):
    kind: ClassVar[str]

    @property
    def id(self) -> str: ...

    @property
    def policy(self) -> str | None: ...

    def as_dict(self) -> dict[str, Any]: ...

    def describe(self) -> str: ...

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Finding: ...


@dataclass(frozen=True, slots=True)
class User:
    """The GitLab user a finding is about: `{"id": …, "name": …}` in JSON."""

    id: int | None
    name: str | None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> User | None:
        return User(data.get("id"), data.get("name")) if data else None

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name}


def user_dict(user: User | None) -> dict[str, Any] | None:
    return None if user is None else user.as_dict()


def user_text(user: User | None) -> str:
    return "no user (authentication log)" if user is None else f"{user.name or 'user'} ({user.id})"


def plural(count: int, word: str, many: str | None = None) -> str:
    return f"{count} {word if count == 1 else many or word + 's'}"


ANY = "*"  # in `reads`: every event the stage receives (the type decides nothing)
Stage = Literal["project", "actor"]
State = dict[str, Any]
Event = dict[str, Any]
Result = Finding | Event
Check = Callable[[Event], str | None]  # a normalized event: why it cannot be used, or None
Handler = Callable[[State, Event, DetectorSettings], Sequence[Result]]
NONE: tuple[Result, ...] = ()  # the usual answer, shared


class Detector(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def stage(self) -> Stage: ...

    @property
    def reads(self) -> frozenset[str]:
        """The event types it is called for (ANY: every event of its stage)."""
        ...

    @property
    def dedup(self) -> frozenset[str]:
        """Types whose `id` the project stage remembers first: a repeat reaches no detector."""
        ...

    @property
    def checks(self) -> Mapping[str, Check]:
        """Per type: what makes an event unusable beyond a missing created_at or entity_path."""
        ...

    @property
    def settings(self) -> tuple[str, ...]:
        """The `DetectorSettings` fields it reads."""
        ...

    @property
    def findings(self) -> tuple[type[Finding], ...]:
        """The records it raises."""
        ...

    def state(self) -> State:
        """Its keys of a new stage value, empty."""
        ...

    def on_event(self, state: State, event: Event, settings: DetectorSettings) -> Sequence[Result]: ...

    def handler(self, kind: str) -> Handler:
        """What the stage's table calls for events of type `kind` (ANY: the types it does not
        name): `on_event`, or the part of it that serves that type, so that the table, not a
        second test of the type, decides."""
        ...

    def open_findings(self, state: State) -> Iterable[Finding]:
        """What the worker's `/findings` view shows from one stage value."""
        ...

    def active_since(self, state: State, cutoff: float) -> bool:
        """Actor stage: whether the value records anything at or after `cutoff` (event time)."""
        ...

    def horizon(self, settings: DetectorSettings) -> float:
        """Actor stage: event time after which an idle value can no longer change a result."""
        ...


class Base(ABC):
    """Defaults for the optional parts of `Detector`: no dedup, no checks, no settings, nothing
    shown in the views, nothing to keep (an actor value it owns can be dropped any time)."""

    dedup: frozenset[str] = frozenset()
    checks: Mapping[str, Check] = {}
    settings: tuple[str, ...] = ()
    findings: tuple[type[Finding], ...] = ()

    @abstractmethod
    def on_event(self, state: State, event: Event, settings: DetectorSettings) -> Sequence[Result]:
        """Each detector's own: the stage value in, its results out (see `Detector.on_event`)."""

    def handler(self, kind: str) -> Handler:
        return self.on_event

    def open_findings(self, state: State) -> Iterable[Finding]:
        return ()

    def active_since(self, state: State, cutoff: float) -> bool:
        return False

    def horizon(self, settings: DetectorSettings) -> float:
        return 0.0
