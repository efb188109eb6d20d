"""GitLab's required upgrade stops and the plan of one upgrade: from the release an instance runs
(`--from`) to the target, each stop GitLab requires on the way and the findings whose change takes
effect at that step.

The stops are data: `policies/upgrade-path.yml`, transcribed from GitLab's `config/upgrade_path.yml`
(the file cites its commit). GitLab lists stops up to its newest release; an upgrade to a later target
has no known stops past the last one, and the plan says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from scanner.core.results import Finding, UpgradeStep
from scanner.core.versions import Version

DATA = Path(__file__).resolve().parent.parent / "policies" / "upgrade-path.yml"


@dataclass(frozen=True, slots=True)
class Stop:
    release: Version
    note: str = ""

    @property
    def conditional(self) -> bool:
        return "conditional stop" in self.note.lower()


def load_stops(path: Path = DATA) -> tuple[Stop, ...]:
    """The stops of the data file, oldest first; a malformed file is a ValueError naming the entry."""
    from ruamel.yaml import YAML

    data = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise ValueError(f"{path.name}: a list of stops (major, minor, comments)")
    stops = []
    for n, raw in enumerate(data, start=1):
        if not isinstance(raw, dict) or not all(isinstance(raw.get(k), int) for k in ("major", "minor")):
            raise ValueError(f"{path.name}: stop {n}: needs integer `major` and `minor`")
        stops.append(Stop(Version(raw["major"], raw["minor"]), str(raw.get("comments") or "")))
    return tuple(sorted(stops, key=lambda s: s.release))


def stops_between(current: Version, target: Version, stops: tuple[Stop, ...]) -> list[Stop]:
    """The stops an upgrade from `current` to `target` passes through (both ends left out)."""
    return [s for s in stops if current < s.release < target]


def plan(findings: list[Finding], current: Version, target: Version,
         stops: tuple[Stop, ...] | None = None) -> tuple[UpgradeStep, ...]:
    """Each required stop between the two ends, then the target, with the findings whose scheduled
    change takes effect after the step before it and at or before it. Changes in effect at `current`
    or later than the target, and pending or canceled ones, belong to no step."""
    known = load_stops() if stops is None else stops
    steps = [*stops_between(current, target, known), Stop(target)]
    out, previous = [], current
    for stop in steps:
        mine = tuple(n for n, f in enumerate(findings) if f.removal == "scheduled" and f.removed_in is not None
                     and previous < Version.parse(f.removed_in) <= stop.release)
        is_target = stop.release == target
        out.append(UpgradeStep(str(stop.release), not is_target and not stop.conditional, stop.conditional,
                               stop.note, mine))
        previous = stop.release
    return tuple(out)


def past_known_stops(target: Version, stops: tuple[Stop, ...] | None = None) -> str | None:
    """The last stop GitLab lists, when the target is later (its stops past that are not known yet)."""
    known = load_stops() if stops is None else stops
    return str(known[-1].release) if known and target > known[-1].release else None
