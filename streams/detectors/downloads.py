"""Detector 1: download tallies per project across the 17.0 split, with duplicate deliveries dropped.

Since GitLab 17.0 `repository_download_operation` covers only private and internal projects and
the new, streaming-only `public_repository_download_operation` covers public ones: a dashboard
must add both. A project seen under both has changed visibility, which is worth a finding.

State: the `downloads`, `first_type` and `visibility` keys of one project's value (project
stage). Repeated deliveries never reach it: the stage remembers each download's id first
(`streams.stages`), in the same value, so counts and ids are written in one changelog record.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from streams.audit import DOWNLOAD_TYPES, iso
from streams.detectors.base import NONE, Base, Event, Handler, Result, Stage, State
from streams.settings import DetectorSettings


@dataclass(frozen=True, slots=True)
class VisibilityChanged:
    """Downloads of one project under both event types: its visibility changed (or it is pre-/post-17.0)."""

    kind: ClassVar[str] = "visibility_changed"
    id: str
    project: str
    first_type: str
    then_type: str
    at: str
    policy: str | None = None  # no scanner policy: audit events are server behaviour, not in a repository

    @classmethod
    def of(cls, project: str, before: str, after: str, ts: float) -> VisibilityChanged:
        return cls(f"visibility_changed:{project}", project, before, after, iso(ts))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> VisibilityChanged:
        return cls(data["id"], data["project"], data["first_type"], data["then_type"], data["at"])

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "id": self.id, "project": self.project, "first_type": self.first_type,
                "then_type": self.then_type, "at": self.at}

    def describe(self) -> str:
        return f"{self.project} downloaded as {self.first_type}, then as {self.then_type} at {self.at}"


def _needs_id(event: Event) -> str | None:
    return "missing id" if event["id"] is None else None


def count(value: State, event: Event, settings: DetectorSettings) -> Sequence[Result]:
    """Count one (first) delivery of a download in its project's value; a finding at the first
    download of the other type."""
    kind = event["event_type"]
    value["downloads"][kind] += 1
    first = value["first_type"]
    if first is None:
        value["first_type"] = kind
    elif first != kind and value["visibility"] is None:
        finding = VisibilityChanged.of(event["entity_path"], first, kind, event["ts"])
        value["visibility"] = finding.as_dict()  # state is JSON: the changelog and the views read it
        return (finding,)
    return NONE


class Tallies(Base):
    name = "download_tallies"
    stage: Stage = "project"
    reads = frozenset(DOWNLOAD_TYPES)
    dedup = reads
    checks = dict.fromkeys(DOWNLOAD_TYPES, _needs_id)
    findings = (VisibilityChanged,)

    def state(self) -> State:
        return {"downloads": dict.fromkeys(DOWNLOAD_TYPES, 0), "first_type": None, "visibility": None}

    def on_event(self, state: State, event: Event, settings: DetectorSettings) -> Sequence[Result]:
        return count(state, event, settings)

    def handler(self, kind: str) -> Handler:
        return count  # the function itself: no frame in between, per event

    def open_findings(self, state: State) -> Iterable[VisibilityChanged]:
        visibility = state.get("visibility")
        return (VisibilityChanged.from_dict(visibility),) if visibility else ()


TALLIES = Tallies()


def tallies(projects: Mapping[str, Any]) -> dict[str, dict[str, int]]:
    """Download counts per project path, sorted, both event types always present."""
    out = {}
    for key in sorted(projects):
        value = projects[key]
        if value and any(value["downloads"].values()):
            out[key] = dict(value["downloads"])
    return out
