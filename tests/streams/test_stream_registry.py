"""The detector list and what is built from it: dispatch tables, state shapes, validation data,
finding records with their scanner policy ids; and the package's structural limits."""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar

import pytest
from streamkit import ROOT, SAMPLE, SNAPSHOT, event, limits

from streams import events
from streams.detectors.base import ANY, NONE, Base, Event, Finding, Result, State, User
from streams.detectors.downloads import VisibilityChanged
from streams.detectors.gaps import AllowlistGap, JobTokenPublicAccess
from streams.detectors.massdownload import MassDownload
from streams.detectors.registry import DETECTORS, NOWHERE, REGISTRY, Registry, Route
from streams.events import load_snapshot
from streams.replay import Engine, replay_file
from streams.settings import DetectorSettings
from streams.stages import STAGE_SETTINGS, actor_stage

ALLOWLIST = ["secure_ci_job_token_project_added", "secure_ci_job_token_project_removed",
             "secure_ci_job_token_group_added", "secure_ci_job_token_group_removed",
             "secure_ci_job_token_inbound_enabled", "secure_ci_job_token_inbound_disabled"]
DOWNLOADS = ["repository_download_operation", "public_repository_download_operation"]
OWN = ["sunset_job_token_allowlist_snapshot", "sunset_job_token_access", "sunset_job_token_auth_log"]


def names(route: Route, kind: str = ANY) -> tuple[bool, list[str]] | None:
    if route == NOWHERE:
        return None
    assert route.handlers == tuple(detector.handler(kind) for detector in route.detectors)
    return route.dedup, [detector.name for detector in route.detectors]


def test_the_list_is_explicit_and_in_order() -> None:
    assert [d.name for d in DETECTORS] == ["download_tallies", "job_token_allowlist_gaps", "mass_download",
                                           "job_token_correlation"]
    assert [d.stage for d in DETECTORS] == ["project", "project", "actor", "actor"]


def test_each_event_type_goes_to_exactly_the_detectors_that_read_it() -> None:
    gaps = ["job_token_allowlist_gaps"]
    assert {kind: names(route, kind) for kind, route in REGISTRY.project.items()} == {
        **{kind: (True, ["download_tallies", *gaps]) for kind in DOWNLOADS},  # gaps: downloads show visibility
        **{kind: (False, gaps) for kind in ALLOWLIST}, "project_visibility_level_updated": (False, gaps),
        "sunset_job_token_allowlist_snapshot": (False, gaps),
        "sunset_job_token_access": (True, gaps), "sunset_job_token_auth_log": (True, gaps)}
    assert REGISTRY.project_default is NOWHERE  # any other type: no project detector, no write
    both = (False, ["mass_download", "job_token_correlation"])
    assert {kind: names(route, kind) for kind, route in REGISTRY.actor.items()} == {
        **dict.fromkeys(DOWNLOADS, both), "repository_git_operation": both,
        "user_authenticated_using_job_token": (False, ["job_token_correlation"])}
    assert names(REGISTRY.actor_default) == (False, ["job_token_correlation"])  # it reads ANY
    for routes, calls in ((REGISTRY.project, REGISTRY.project_calls), (REGISTRY.actor, REGISTRY.actor_calls)):
        assert REGISTRY.project_early == frozenset()  # every project type waits for the actors' accesses
        lanes = {kind: "seen" if route.dedup else "" for kind, route in routes.items()}
        assert calls == {kind: (list(route.handlers), lanes[kind]) for kind, route in routes.items()}
        assert all(type(call) is tuple for call in calls.values())


def test_validation_and_routing_data_come_from_the_detectors() -> None:
    project_types = {*DOWNLOADS, *ALLOWLIST, *OWN, "project_visibility_level_updated"}
    assert project_types == events.PROJECT_STAGE_TYPES
    assert {*project_types, "repository_git_operation", "user_authenticated_using_job_token"} == events._DETECTOR_TYPES
    assert {kind: [check.__name__ for check in checks] for kind, checks in events._CHECKS.items()} == {
        **dict.fromkeys(DOWNLOADS, ["_needs_id"]), "user_authenticated_using_job_token": ["_login_check"],
        "project_visibility_level_updated": ["_visibility_check"]}


def test_stage_values_are_the_union_of_the_detectors_parts() -> None:
    assert REGISTRY.new_project() == {
        "seen": {}, "clock": 0.0,  # the stage's dedup record
        "downloads": dict.fromkeys(DOWNLOADS, 0), "first_type": None, "visibility": None,
        "allow": {"projects": {}, "groups": {}, "inbound": None, "source": None}, "gaps": {}, "levels": [],
        "open_access": {}}
    assert REGISTRY.new_actor() == {"name": None, "recent": {}, "clock": 0.0, "alerted_until": None,
                                    "alert": None, "auths": [], "pending": []}
    first, second = REGISTRY.new_project(), REGISTRY.new_project()
    first["downloads"][DOWNLOADS[0]] += 1
    first["gaps"]["x"] = {}
    assert second == REGISTRY.new_project() != first  # fresh containers every time
    assert type(REGISTRY.new_actor()["clock"]) is float


def test_every_detector_setting_belongs_to_a_detector_or_the_stage() -> None:
    declared = {name for d in DETECTORS for name in d.settings}
    assert declared <= set(DetectorSettings.model_fields)
    assert declared | set(STAGE_SETTINGS) == set(DetectorSettings.model_fields)


# --- a new detector: one class and one entry in a list; the engine is not touched ----------------

@dataclasses.dataclass(frozen=True, slots=True)
class Busy:
    kind: ClassVar[str] = "toy_busy"
    id: str
    count: int
    policy: str | None = None

    @classmethod
    def from_dict(cls, data: Any) -> Busy:
        return cls(data["id"], data["count"])

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "id": self.id, "count": self.count}

    def describe(self) -> str:
        return f"{self.count} events"


class ProjectToy(Base):
    """Counts downloads and `toy_event`s per project; a finding at the second."""

    name, stage, reads, findings = "toy", "project", frozenset({"toy_event", DOWNLOADS[0]}), (Busy,)

    def state(self) -> State:
        return {"toy": 0}

    def on_event(self, state: State, event: Event, settings: DetectorSettings) -> Sequence[Result]:
        state["toy"] += 1
        return (Busy(f"toy_busy:{event['pkey']}", state["toy"]),) if state["toy"] == 2 else NONE


class ActorToy(Base):
    """Sees every actor-stage event; keeps a user for 5000 s."""

    name, stage, reads = "actor_toy", "actor", frozenset({ANY})

    def state(self) -> State:
        return {"toy_last": 0.0}

    def on_event(self, state: State, event: Event, settings: DetectorSettings) -> Sequence[Result]:
        state["toy_last"] = event["ts"]
        return NONE

    def active_since(self, state: State, cutoff: float) -> bool:
        return bool(state["toy_last"] >= cutoff)

    def horizon(self, settings: DetectorSettings) -> float:
        return 5000.0


def test_a_detector_added_to_a_copy_of_the_list_is_dispatched() -> None:
    registry = Registry([*DETECTORS, ProjectToy(), ActorToy()])
    assert names(registry.project["toy_event"], "toy_event") == (False, ["toy"])
    assert names(registry.project[DOWNLOADS[0]], DOWNLOADS[0]) == (True, ["download_tallies",
                                                                          "job_token_allowlist_gaps", "toy"])
    assert names(registry.actor_default) == (False, ["job_token_correlation", "actor_toy"])
    assert registry.horizon(limits()) == 5000.0
    engine = Engine(limits(allowed_lateness=0), registry)  # each event applied as it comes
    download = events.normalize(event(DOWNLOADS[0], 1, project="a/x", ident=1))
    toy = {"event_type": "toy_event", "id": None, "ts": 1748854802.0, "pkey": "a/x", "akey": None}
    assert isinstance(download, dict)
    found = [engine.step(download), engine.step(dict(download)), engine.step(toy)]  # the repeat is deduplicated
    assert found == [[], [], []] and engine.finish() == [Busy("toy_busy:a/x", 2)]  # the toy event: at the end
    assert (engine.projects["a/x"]["toy"], engine.projects["a/x"]["downloads"][DOWNLOADS[0]]) == (2, 1)
    assert engine.actors["7"]["toy_last"] == 1748854801.0
    assert REGISTRY.project.keys() == Registry(DETECTORS).project.keys()  # the real list is untouched
    actors: dict[str, Any] = {}
    signed_in = {**download, "event_type": "authenticated_with_password"}  # a type no real actor detector names
    actor_stage(actors, signed_in, limits(), registry)
    assert actors["7"]["toy_last"] == 1748854801.0


@pytest.mark.parametrize(("extra", "message"), [
    ([ProjectToy(), ProjectToy()], "detector names repeat"),
    ([type("Clash", (ProjectToy,), {"name": "clash", "state": lambda self: {"gaps": {}}})()],
     "clash: state key 'gaps' is already job_token_allowlist_gaps's"),
    ([type("Seen", (ProjectToy,), {"name": "seen", "state": lambda self: {"seen": {}}})()],
     "seen: state key 'seen' is already the project stage's"),
    ([type("Dedup", (ActorToy,), {"name": "dedup", "dedup": frozenset({"x"})})()],
     "dedup: only the project stage deduplicates by id"),
])
def test_a_list_that_cannot_work_is_refused_when_built(extra: Iterable[Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Registry([*DETECTORS, *extra])


# --- findings: frozen records with the scanner's policy id ---------------------------------------

def test_finding_records_are_frozen_with_slots_and_carry_the_policy_ids() -> None:
    assert REGISTRY.kinds == {"visibility_changed": VisibilityChanged, "mass_download": MassDownload,
                              "job_token_allowlist_gap": AllowlistGap, "job_token_public_access": JobTokenPublicAccess}
    policies = {cls.kind: {f.name: f.default for f in dataclasses.fields(cls)}["policy"]
                for cls in (VisibilityChanged, MassDownload, AllowlistGap, JobTokenPublicAccess)}
    assert policies == {"visibility_changed": None, "mass_download": None, "job_token_public_access": None,
                        "job_token_allowlist_gap": "job-token-allowlist-enforcement"}
    assert [path.relative_to(ROOT).as_posix() for path in ROOT.glob("policies/*/job-token-allowlist-enforcement.yaml")
            ] == ["policies/ci/job-token-allowlist-enforcement.yaml"]
    record = VisibilityChanged.of("a/w", DOWNLOADS[0], DOWNLOADS[1], 1748854861.0)
    assert not hasattr(record, "__dict__")
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.project = "b/w"  # type: ignore[misc]


def test_records_become_the_published_dicts_and_back() -> None:
    engine = Engine(limits(mass_download_allowlist=["90"]))
    records: list[Finding] = []
    for record in load_snapshot(SNAPSHOT):
        normalized = events.normalize(record)
        assert isinstance(normalized, dict)
        records += engine.step(normalized)
    for line in SAMPLE.read_bytes().splitlines():
        got = events.read(line)
        for normalized in [got] if isinstance(got, dict) else got:
            records += engine.step(normalized) if isinstance(normalized, dict) else []
    records += engine.finish()
    doc = replay_file(SAMPLE, limits(mass_download_allowlist=["90"]), load_snapshot(SNAPSHOT))
    assert list({r.id: r.as_dict() for r in records}.values()) == doc["findings"]
    assert [(r.kind, r.policy) for r in {r.id: r for r in records}.values()] == [
        ("visibility_changed", None), ("mass_download", None),
        *[("job_token_allowlist_gap", "job-token-allowlist-enforcement")] * 3, ("job_token_public_access", None),
        ("job_token_allowlist_gap", "job-token-allowlist-enforcement")]
    assert all("policy" not in finding for finding in doc["findings"])  # the JSON contract is unchanged
    for finding in doc["findings"]:
        assert REGISTRY.finding(finding).as_dict() == finding
    gap = REGISTRY.finding(doc["findings"][4])  # the authentication log row
    assert isinstance(gap, AllowlistGap) and (gap.user, gap.evidence) == (None, ("auth_log",))
    alert = REGISTRY.finding(doc["findings"][1])
    assert isinstance(alert, MassDownload) and alert.user == User(66, "Mallory Moe")


# --- structure: module and function sizes, no import cycles ----------------------------------------

PACKAGE = ROOT / "streams"


def modules() -> dict[str, ast.Module]:
    """Every module of the package by its dotted name below `streams` (`detectors.gaps`)."""
    return {".".join(path.relative_to(PACKAGE).with_suffix("").parts): ast.parse(path.read_text())
            for path in sorted(PACKAGE.rglob("*.py"))}


def test_functions_stay_small() -> None:
    long_functions = [f"{name}.{node.name}" for name, tree in modules().items() for node in ast.walk(tree)
                      if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                      and node.end_lineno is not None and node.end_lineno - node.lineno + 1 > 40]
    assert long_functions == []


def imports(tree: ast.Module) -> set[str]:
    """The streams modules a module imports, at any level (functions and TYPE_CHECKING included)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("streams."):
            out.add(node.module.removeprefix("streams."))  # type: ignore[union-attr]
        elif isinstance(node, ast.ImportFrom) and node.module == "streams":
            out |= {alias.name for alias in node.names}
        elif isinstance(node, ast.Import):
            out |= {alias.name.removeprefix("streams.") for alias in node.names if alias.name.startswith("streams.")}
    return out


def test_the_stages_and_the_parser_name_no_detector() -> None:
    """Dispatch comes from the registry: the stages, the event-time holding and the parser import the
    detectors' common part and the list, never a detector (import cycles: tests/test_architecture.py)."""
    graph = {name: imports(tree) - {name} for name, tree in modules().items()}
    assert {"stages", "events", "eventtime"} <= set(graph)
    detectors = {name for name in graph if name.startswith("detectors.")} - {"detectors.base", "detectors.registry",
                                                                          "detectors.__init__"}
    assert detectors == {"detectors.downloads", "detectors.gaps", "detectors.massdownload", "detectors.correlate"}
    assert {name: graph[name] & detectors for name in ("stages", "events", "eventtime", "replay")} == {
        "stages": set(), "events": set(), "eventtime": set(), "replay": {"detectors.downloads"}}
    assert "detectors.registry" in graph["events"] and "detectors.registry" in graph["stages"]
