"""docs/architecture.md's recipe "Add a stream detector", followed in a copy of the package: the
files it names are the files a new detector needs (three, besides tests), and with those edits the
detector's events are routed, validated, dispatched, and its findings reach the replay document,
its text and the worker's `/findings` view, its setting read from the environment."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from streamkit import ROOT, event

RECIPE = re.compile(r"\*\*Add a stream detector\.\*\*(.*?)\n\n", re.S)

TOY = '''"""A throwaway detector: a project whose branch was protected twice is noted."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from streams.detectors.base import NONE, Base, Event, Result, Stage, State
from streams.settings import DetectorSettings


@dataclass(frozen=True, slots=True)
class Guarded:
    kind: ClassVar[str] = "toy_guarded"
    id: str
    project: str
    times: int
    policy: str | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Guarded:
        return cls(data["id"], data["project"], data["times"])

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "id": self.id, "project": self.project, "times": self.times}

    def describe(self) -> str:
        return f"{self.project} protected {self.times} times"


class Toy(Base):
    name = "toy"
    stage: Stage = "project"
    reads = frozenset({"protected_branch_created"})
    settings = ("toy_times",)
    findings = (Guarded,)

    def state(self) -> State:
        return {"toy": 0, "toy_found": None}

    def on_event(self, state: State, event: Event, settings: DetectorSettings) -> Sequence[Result]:
        state["toy"] += 1
        if state["toy"] != settings.toy_times:  # type: ignore[attr-defined]
            return NONE
        found = Guarded(f"toy_guarded:{event['entity_path']}", event["entity_path"], state["toy"])
        state["toy_found"] = found.as_dict()
        return (found,)

    def open_findings(self, state: State) -> Iterable[Guarded]:
        return (Guarded.from_dict(state["toy_found"]),) if state["toy_found"] else ()


TOY = Toy()
'''

RUN = '''
import json, sys
from pathlib import Path
from streams.events import read
from streams.replay import Engine, replay_file, write_text
from streams.settings import DetectorSettings
from streams.worker.web import open_findings

class Table:  # what the view reads of a Faust table
    def __init__(self, data): self.data = data

doc = replay_file(Path(sys.argv[1]), DetectorSettings())
write_text(doc, open(sys.argv[2], "w"))
engine = Engine(DetectorSettings())
for line in Path(sys.argv[1]).read_bytes().splitlines():
    got = read(line)
    for event in [got] if isinstance(got, dict) else got:
        if isinstance(event, dict):
            engine.step(event)
engine.finish()
print(json.dumps({"doc": doc, "view": open_findings(Table(engine.projects), Table(engine.actors))}))
'''


def recipe_files() -> list[str]:
    """The files the recipe says a new detector touches (tests aside)."""
    text = RECIPE.search((ROOT / "docs" / "architecture.md").read_text())
    assert text is not None, "docs/architecture.md has no 'Add a stream detector' recipe"
    return sorted({path for path in re.findall(r"`(streams/[\w/<>.]+)`", text.group(1))})


def test_the_recipe_names_three_files_and_they_are_enough(tmp_path: Path) -> None:
    assert recipe_files() == ["streams/detectors/<name>.py", "streams/detectors/registry.py", "streams/settings.py"]
    copy = tmp_path / "repo"
    shutil.copytree(ROOT / "streams", copy / "streams", ignore=shutil.ignore_patterns("__pycache__"))
    before = {p.relative_to(copy).as_posix(): p.read_bytes() for p in copy.rglob("*.py")}

    (copy / "streams" / "detectors" / "toy.py").write_text(TOY)
    registry = copy / "streams" / "detectors" / "registry.py"
    text = registry.read_text()
    massdownload = "from streams.detectors.massdownload import MASS_DOWNLOAD\n"
    text = text.replace(massdownload, massdownload + "from streams.detectors.toy import TOY\n")
    text = re.sub(r"(DETECTORS: tuple\[Detector, \.\.\.\] = \([^)]*)\)", r"\1, TOY)", text, count=1)
    registry.write_text(text)
    settings = copy / "streams" / "settings.py"
    field = '    toy_times: int = Field(2, ge=1, description="protections before a note")\n'
    anchor = "    dedup_ttl: float = Field("
    settings.write_text(settings.read_text().replace(anchor, field + anchor, 1))

    after = {p.relative_to(copy).as_posix(): p.read_bytes() for p in copy.rglob("*.py")}
    touched = sorted(name for name in after if before.get(name) != after[name])
    assert touched == ["streams/detectors/registry.py", "streams/detectors/toy.py", "streams/settings.py"]

    lines = tmp_path / "events.jsonl"
    lines.write_text("".join(json.dumps(event("protected_branch_created", n, project="g/p", ident=n)) + "\n"
                             for n in range(3)) + json.dumps({"event_type": "protected_branch_created"}) + "\n")
    text_out = tmp_path / "report.txt"
    env = {**os.environ, "PYTHONPATH": str(copy), "SUNSET_TOY_TIMES": "3"}
    done = subprocess.run([sys.executable, "-c", RUN, str(lines), str(text_out)], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["doc"]["findings"] == [{"kind": "toy_guarded", "id": "toy_guarded:g/p", "project": "g/p", "times": 3}]
    assert out["doc"]["dead_letters"] == [{"line": 4, "reason": "missing or invalid created_at"}]  # validated
    assert "  toy_guarded: g/p protected 3 times\n" in text_out.read_text()
    assert out["view"] == out["doc"]["findings"]
