"""Detector 2: mass download — GitLab's Ultimate-only Git abuse rate limit, for any tier.

A user who downloads (archive, clone or fetch) more than N distinct projects within T seconds is
reported once per window, not once per event. Anonymous downloads (author_id -1, one shared id
for every unauthenticated user) are not attributed to anybody and never alert.

State: the `name`, `recent`, `clock`, `alerted_until`, `alert` (and `oldest`) keys of one user's
value (actor stage). It is idempotent by construction — a project set with its newest time — so
a duplicate delivery changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from streams.audit import DOWNLOAD_TYPES, GIT_OPERATION, iso
from streams.detectors.base import NONE, Base, Event, Handler, Result, Stage, State, User, user_text
from streams.settings import DetectorSettings


@dataclass(frozen=True, slots=True)
class MassDownload:
    """More than `limit` distinct projects downloaded by one user within one window."""

    kind: ClassVar[str] = "mass_download"
    id: str
    user: User
    projects: int
    project_paths: tuple[str, ...]
    window_seconds: float
    start: str
    end: str
    limit: int
    policy: str | None = None  # no scanner policy: the Git abuse rate limit is an instance setting

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MassDownload:
        window = data["window"]
        return cls(data["id"], User(data["user"]["id"], data["user"]["name"]), data["projects"],
                   tuple(data["project_paths"]), window["seconds"], window["start"], window["end"], data["limit"])

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "id": self.id, "user": self.user.as_dict(), "projects": self.projects,
                "project_paths": list(self.project_paths),
                "window": {"seconds": self.window_seconds, "start": self.start, "end": self.end},
                "limit": self.limit}

    def describe(self) -> str:
        return (f"{user_text(self.user)} downloaded {self.projects} projects (limit {self.limit}) "
                f"between {self.start} and {self.end}")


def allowlisted(event: Event, limits: DetectorSettings) -> bool:
    """Users never alerted, by id or by name."""
    allow = limits.mass_download_allowlist
    return bool(allow) and (str(event["author_id"]) in allow or event.get("author_name") in allow)


def record(value: State, event: Event, limits: DetectorSettings) -> Sequence[Result]:
    """Record one download (a clone or fetch, not a push) in its user's value; a finding when it
    takes them over the limit."""
    if not event["download"] or (limits.mass_download_allowlist and allowlisted(event, limits)):
        return NONE
    ts, project = event["ts"], event["entity_path"]
    recent: dict[str, float] = value["recent"]
    if ts > recent.get(project, -1.0):
        recent[project] = ts
    clock = value["clock"]
    if ts > clock:
        value["clock"] = clock = ts
    if len(recent) > limits.mass_download_projects:
        cutoff = clock - limits.mass_download_window
        if value.get("oldest", -1.0) <= cutoff:  # something may have expired: prune (else all count)
            _prune(recent, cutoff, 4 * limits.mass_download_projects + 64)
            value["oldest"] = min(recent.values())
        until = value["alerted_until"]
        if len(recent) > limits.mass_download_projects and (until is None or ts >= until):
            value["alerted_until"] = ts + limits.mass_download_window
            value["name"] = event["author_name"] or value["name"]
            alert = _finding(event["author_id"], value, clock, limits)
            value["alert"] = alert.as_dict()  # state is JSON: the changelog and the views read it
            return (alert,)
    return NONE


def _prune(recent: dict[str, float], cutoff: float, cap: int) -> None:
    """Forget projects last downloaded at or before `cutoff`; keep at most `cap`, newest first."""
    for project in [p for p, ts in recent.items() if ts <= cutoff]:
        del recent[project]
    if len(recent) > cap:
        for project, _ in sorted(recent.items(), key=lambda item: item[1])[: len(recent) - cap]:
            del recent[project]


def _finding(user_id: int, value: State, clock: float, limits: DetectorSettings) -> MassDownload:
    recent: dict[str, float] = value["recent"]
    start = iso(min(recent.values()))
    return MassDownload(f"mass_download:{user_id}:{start}", User(user_id, value["name"]), len(recent),
                        tuple(sorted(recent)), limits.mass_download_window, start, iso(clock),
                        limits.mass_download_projects)


class MassDownloads(Base):
    name = "mass_download"
    stage: Stage = "actor"
    reads = frozenset({*DOWNLOAD_TYPES, GIT_OPERATION})  # git operations: clones and fetches only
    settings = ("mass_download_projects", "mass_download_window", "mass_download_allowlist")
    findings = (MassDownload,)

    def state(self) -> State:
        return {"name": None, "recent": {}, "clock": 0.0, "alerted_until": None, "alert": None}

    def on_event(self, state: State, event: Event, settings: DetectorSettings) -> Sequence[Result]:
        return record(state, event, settings)

    def handler(self, kind: str) -> Handler:
        return record  # the function itself: no frame in between, per event

    def open_findings(self, state: State) -> Iterable[MassDownload]:
        alert = state.get("alert")
        return (MassDownload.from_dict(alert),) if alert else ()

    def active_since(self, state: State, cutoff: float) -> bool:
        """Its downloads and its alert suppression end one window after the newest download."""
        return bool(state["clock"] >= cutoff)

    def horizon(self, settings: DetectorSettings) -> float:
        return settings.mass_download_window


MASS_DOWNLOAD = MassDownloads()
