"""The Faust agents and the router, without a broker: `Agent.test_context()` and recorded sends."""

from __future__ import annotations

import asyncio
import ctypes
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from math import inf, nextafter
from pathlib import Path
from typing import Any

import orjson
import pytest
from faust.transport.drivers.aiokafka import Producer
from streamkit import event

from streams.events import Rejected, compact, normalize
from streams.eventtime import PROGRESS, actors_report, input_report, progress_key
from streams.metrics import Metrics
from streams.settings import load_settings
from streams.stages import project_stage
from streams.worker.agents import ActorHandler, Outputs, ProjectHandler, lowest_released
from streams.worker.app import create_app
from streams.worker.batching import MARKER_PREFIX, encode_lines, is_marker, partition_for
from streams.worker.ingest import Router
from streams.worker.web import _count

Sent = list[tuple[str, Any, Any, Any]]
APP = "agents"
BASE = 1748854800.0  # streamkit.at(0)


@pytest.fixture(name="sent")
def sent_fixture(monkeypatch: pytest.MonkeyPatch) -> Sent:
    """Every record the app's producer is given, as (topic, key, value, partition), and no broker."""
    records: Sent = []

    async def fake_send(self: Any, topic: str, key: bytes | None, value: bytes | None, partition: int | None,
                        timestamp: Any, headers: Any) -> Any:
        if key is not None:  # changelog keys are JSON, the others plain text
            key = orjson.loads(key) if topic.endswith("-changelog") else key.decode()
        records.append((topic, key, value, partition))
        done = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done

    monkeypatch.setattr(Producer, "send", fake_send)
    return records


def new_app(tmp_path: Path) -> Any:
    settings = load_settings("dev", broker="kafka://127.0.0.1:9", partitions=4, app_id=APP, data_dir=tmp_path,
                             batch_within=0.05)
    app = create_app(settings)
    app.finalize()
    return app


def stage_message(*raws: dict[str, Any], through: float | None = None) -> bytes:
    """Stage records, then (`through`: a second of `streamkit.at`) the progress reports that move
    the watermark past it (a release takes what is before its watermark): the one input partition
    idle at it (its watermark just above its newest time), and every actor partition released to
    just above it."""
    records = []
    for raw in raws:
        out = normalize(raw)
        assert not isinstance(out, Rejected)
        records.append(compact(out))
    if through is not None:
        ts = BASE + through
        records += [input_report(1, {0: ts}, {0}), *(actors_report(4, {p: nextafter(ts, inf)}) for p in range(4))]
    (message,) = encode_lines(records)
    return message


def state_writes(sent: Sent, topic: str) -> list[tuple[Any, bool, Any]]:
    """(key, tombstone, partition) of the changelog records that are state (not markers or progress)."""
    return [(k, v is None, p) for t, k, v, p in sent if t == topic and not is_marker(k)]


async def until(check: Callable[[], bool]) -> None:
    for _ in range(400):
        if check():
            return
        await asyncio.sleep(0.01)
    pytest.fail("the agent did not get there in 4 s")


def test_a_tables_count_leaves_out_sunsets_own_keys(tmp_path: Path) -> None:
    """`/metrics`' projects and users: the table's keys but the flush markers and progress records."""
    table = new_app(tmp_path).tables["projects"]
    for key in ("a/x", f"{MARKER_PREFIX}2", progress_key(2), "b/y", progress_key(3), f"{MARKER_PREFIX}0", "c/z"):
        table.data[key] = {"downloads": {}}
    assert _count(table) == 3
    del table.data["b/y"], table.data[progress_key(2)]
    assert _count(table) == 2


def test_projects_agent_writes_each_key_once_then_a_tail_marker(tmp_path: Path, sent: Sent) -> None:
    app = new_app(tmp_path)
    downloads = [event("repository_download_operation", i, project="a/x", ident=i) for i in range(3)]
    public = event("public_repository_download_operation", 9, project="a/x", ident="u-1", author=-1)

    async def scenario() -> None:
        async with app.agents["projects"].test_context() as agent:
            await agent.put(stage_message(*downloads, downloads[0]), partition=2, wait=False)
            await agent.put(stage_message(public, through=9), partition=2, wait=False)
            await until(lambda: any(t == f"{APP}-projects-changelog" and str(k).startswith(MARKER_PREFIX)
                                    for t, k, _, _ in sent))

    asyncio.run(scenario())
    value = app.tables["projects"].data["a/x"]
    assert value["downloads"] == {"repository_download_operation": 3, "public_repository_download_operation": 1}
    changelog = [(k, p) for t, k, _, p in sent if t == f"{APP}-projects-changelog"]
    assert sorted(changelog[:-1]) == [(progress_key(2), 2), ("a/x", 2)]  # each key once, then the marker
    assert changelog[-1] == (f"{MARKER_PREFIX}2", 2)
    findings = [(k, orjson.loads(v)["kind"]) for t, k, v, _ in sent if t == "sunset-findings"]
    assert findings == [("visibility_changed:a/x", "visibility_changed")]


def test_a_failing_line_is_a_dead_letter_and_the_rest_is_processed(tmp_path: Path, sent: Sent) -> None:
    app = new_app(tmp_path)
    good = stage_message(event("repository_download_operation", 1, project="a/y", ident=1), through=1)
    broken = b'{"event_type": "repository_download_operation", "pkey": "a/y"}'  # no id, ts…

    async def scenario() -> None:
        async with app.agents["projects"].test_context() as agent:
            await agent.put(broken + b"\n" + good, partition=1, wait=False)
            await until(lambda: any(t == f"{APP}-projects-changelog" for t, *_ in sent))

    asyncio.run(scenario())
    (dead,) = [orjson.loads(v) for t, _, v, _ in sent if t == "sunset-dead-letters"]
    assert dead == {"reason": "projects stage failed: KeyError('id')", "topic": f"{APP}-by-project",
                    "partition": 1, "offset": 0, "element": None, "payload": broken.decode()}
    assert app.tables["projects"].data["a/y"]["downloads"]["repository_download_operation"] == 1


def test_a_detector_that_raises_is_a_dead_letter_and_the_batch_goes_on(
        tmp_path: Path, sent: Sent, monkeypatch: pytest.MonkeyPatch) -> None:
    """A detector's exception while held records are released: the record is a dead letter (from
    the stage's changelog partition, with its line), the records before and after it are applied."""
    def exploding(view: Any, record: dict[str, Any], limits: Any) -> Any:
        if record["id"] == "boom":
            raise RuntimeError("detector bug")
        return project_stage(view, record, limits)

    monkeypatch.setattr(ProjectHandler, "stage", staticmethod(exploding))
    app = new_app(tmp_path)
    downloads = [event("repository_download_operation", i, project="a/z", ident=ident)
                 for i, ident in enumerate(("a", "boom", "c"))]

    async def scenario() -> None:
        async with app.agents["projects"].test_context() as agent:
            await agent.put(stage_message(*downloads, through=3), partition=1, wait=False)
            await until(lambda: any(t == f"{APP}-projects-changelog" and str(k).startswith(MARKER_PREFIX)
                                    for t, k, _, _ in sent))

    asyncio.run(scenario())
    (dead,) = [orjson.loads(v) for t, _, v, _ in sent if t == "sunset-dead-letters"]
    payload = orjson.loads(dead.pop("payload"))
    assert dead == {"reason": "projects stage failed: RuntimeError('detector bug')",
                    "topic": f"{APP}-projects-changelog", "partition": 1, "offset": None, "element": None}
    assert (payload["id"], payload["pkey"], payload["event_type"]) == ("boom", "a/z", "repository_download_operation")
    assert app.tables["projects"].data["a/z"]["downloads"]["repository_download_operation"] == 2


def test_actors_agent_forwards_accesses_to_the_accessed_projects_partition(tmp_path: Path, sent: Sent) -> None:
    app = new_app(tmp_path)
    login = event("user_authenticated_using_job_token", 0, project="a/deploy", author=7, ip="10.1.1.1", ident="l1")
    access = event("job_artifact_downloaded", 1, project="a/shared", author=7, ip="10.1.1.1", ident=31)

    async def scenario() -> None:
        async with app.agents["actors"].test_context() as agent:
            await agent.put(stage_message(login, access, through=1), partition=partition_for("7", 4), wait=False)
            await until(lambda: any(t == f"{APP}-by-project" for t, *_ in sent))

    asyncio.run(scenario())
    forwards = [(orjson.loads(v), p) for t, _, v, p in sent if t == f"{APP}-by-project"]
    (forward,) = [(r, p) for r, p in forwards if r["event_type"] != PROGRESS]
    record, partition = forward
    # then every project partition hears how far this actor partition has released (after the access)
    assert [(r["source"], r["at"], p) for r, p in forwards[1:]] == [
        ("actors", {str(partition_for("7", 4)): nextafter(BASE + 1, inf)}, p) for p in range(4)]
    assert partition == partition_for("a/shared", 4)
    assert (record["event_type"], record["id"], record["origin"], record["entity_path"]) == (
        "sunset_job_token_access", "access:31", "a/deploy", "a/shared")


@dataclass
class Record:
    """What aiokafka's consumer yields, as far as the router reads it."""

    value: bytes
    topic: str = "in"
    partition: int = 0
    offset: int = 0
    key: bytes | None = None


class Recorder:
    """A topic whose app's producer records what it is given."""

    def __init__(self, name: str, log: Sent) -> None:
        self.name, self.log = name, log
        self.app = self
        self.producer = self

    def get_topic_name(self) -> str:
        return self.name

    async def send(self, topic: str, key: Any, value: Any, partition: Any, timestamp: Any, headers: Any) -> None:
        self.log.append((topic, key, value, partition))


def test_router_forwards_by_key_and_dead_letters_the_rest() -> None:
    log: Sent = []
    settings = load_settings("dev", partitions=4)
    outputs = Outputs(Recorder("findings", log), Recorder("dead", log), Metrics())
    router = Router(settings, Recorder("by-project", log), Recorder("by-actor", log), outputs)
    download = orjson.dumps(event("repository_download_operation", 1, project="a/b", author=5, ident=1))
    messages = [Record(download, offset=0), Record(b"{oops", offset=1),
                Record(b'[{"event_type": "user_signed_in", "entity_type": "User"}, 7]', offset=2)]
    asyncio.run(router.handle(messages))
    assert [(t, p) for t, _, _, p in log if t.startswith("by-")] == [
        ("by-project", partition_for("a/b", 4)), ("by-actor", partition_for("5", 4))]
    dead = [orjson.loads(v) for t, _, v, _ in log if t == "dead"]
    assert [(d["offset"], d["element"], d["reason"].split(":")[0]) for d in dead] == [
        (1, None, "invalid JSON"), (2, 1, "not a JSON object")]
    assert outputs.metrics.value("sunset_stream_events_total", stage="route") == 2
    assert outputs.metrics.value("sunset_stream_forwarded_total", topic="by-project") == 1


def test_the_progress_after_a_batch_rides_in_its_last_message_to_each_stage_partition() -> None:
    """Ingest sends a batch's progress report after its records, in the same message on the stage
    partitions that got records, alone on the others; the forwarded count is the records'."""
    log: Sent = []
    outputs = Outputs(Recorder("findings", log), Recorder("dead", log), Metrics())
    router = Router(load_settings("dev", partitions=4), Recorder("by-project", log), Recorder("by-actor", log), outputs)
    download = orjson.dumps(event("repository_download_operation", 1, project="a/b", author=5, ident=1))
    report = input_report(1, {0: BASE + 1}, set())

    async def batch() -> None:
        await router.send(await router.route([Record(download)]), report)

    asyncio.run(batch())
    got = [(topic, partition, [orjson.loads(line)["event_type"] for line in value.split(b"\n")])
           for topic, _, value, partition in log]
    lines = {("by-project", partition_for("a/b", 4)), ("by-actor", partition_for("5", 4))}
    assert got == [(topic, p, ["repository_download_operation", PROGRESS] if (topic, p) in lines else [PROGRESS])
                   for topic in ("by-project", "by-actor") for p in range(4)]
    assert [orjson.loads(value.split(b"\n")[-1]) for _, _, value, _ in log] == [report] * 8
    assert outputs.metrics.value("sunset_stream_forwarded_total", topic="by-actor") == 1


CLONE = {"custom_message": {"action": "git-upload-pack"}}
ACTORS_CHANGELOG = f"{APP}-actors-changelog"


def flush_markers(sent: Sent) -> int:
    """How many flush markers the actors table's changelog got."""
    return sum(t == ACTORS_CHANGELOG and str(k).startswith(MARKER_PREFIX) for t, k, _, _ in sent)


def test_actors_agent_tombstones_users_idle_past_the_horizon(tmp_path: Path, sent: Sent) -> None:
    app = new_app(tmp_path)
    old, new = [a for a in range(100, 200) if partition_for(str(a), 4) == 3][:2]  # one partition

    def markers() -> int:
        return flush_markers(sent)

    async def scenario() -> None:
        async with app.agents["actors"].test_context() as agent:
            await agent.put(stage_message(event("repository_git_operation", 0, author=old, details=CLONE), through=0),
                            partition=3, wait=False)
            await until(lambda: markers() == 1)
            # 700 s later (horizon: 600 s): the first user is idle, the second is new
            await agent.put(stage_message(event("repository_git_operation", 700, author=new, details=CLONE),
                                          through=700), partition=3, wait=False)
            await until(lambda: markers() == 2)
            await agent.put(stage_message(through=710), partition=3, wait=False)  # the partition's next batch
            await until(lambda: markers() == 3)

    asyncio.run(scenario())
    writes = state_writes(sent, ACTORS_CHANGELOG)
    # the first batch writes `old`, the second `new` (and finds `old` idle), the third the tombstone
    assert writes == [(str(old), False, 3), (str(new), False, 3), (str(old), True, 3)]
    assert [k for k in app.tables["actors"].data if not is_marker(k)] == [str(new)]


def test_a_user_is_tombstoned_only_after_a_marker_past_its_events(tmp_path: Path, sent: Sent) -> None:
    """A batch applies a user's event at 50 s and finds the user idle (its watermark jumps to 700 s;
    horizon 600 s). Were the tombstone written by that batch's flush, a worker killed before the
    flush's marker would restart from the previous marker (watermarks just past 0 s), hold the event
    at 50 s again — no value says it was applied — and apply it again from nothing. The tombstone
    comes with the partition's next flush, after a marker whose watermarks are past the user's
    every event."""
    app = new_app(tmp_path)
    user = next(a for a in range(100, 200) if partition_for(str(a), 4) == 3)

    def markers() -> int:
        return flush_markers(sent)

    async def scenario() -> None:
        async with app.agents["actors"].test_context() as agent:
            for n, (second, through) in enumerate([(0, 0), (50, 700)], start=1):
                raw = event("repository_git_operation", second, author=user, details=CLONE, ident=f"c{second}")
                await agent.put(stage_message(raw, through=through), partition=3, wait=False)
                await until(lambda n=n: markers() == n)
            await agent.put(stage_message(through=710), partition=3, wait=False)  # the partition's next batch
            await until(lambda: markers() == 3)

    asyncio.run(scenario())
    records = [(k, v) for t, k, v, _ in sent if t == ACTORS_CHANGELOG and not str(k).startswith("__sunset_progress__")]
    assert [(k, v is None) for k, v in records] == [
        (str(user), False), (f"{MARKER_PREFIX}3", False), (str(user), False), (f"{MARKER_PREFIX}3", False),
        (str(user), True), (f"{MARKER_PREFIX}3", False)]
    stored = orjson.loads(records[3][1])  # the marker before the tombstone: past the event at 50 s
    assert stored["upto"][1] > BASE + 50


def test_the_worker_keeps_what_it_loaded_at_start_out_of_the_collectors_scans() -> None:
    """`run_worker` calls `collect_less` before it runs: the objects loaded by then are frozen
    (never scanned again) and young objects are collected every GC_YOUNG allocations."""
    code = ("import gc; from streams.worker.app import GC_YOUNG, collect_less; before = gc.get_freeze_count(); "
            "collect_less(); print(before, gc.get_freeze_count() > 10_000, gc.get_threshold()[0] == GC_YOUNG > 700)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.split() == ["0", "True", "True"]


MAPPED = """
import ctypes, sys
from streams.worker.app import map_big_blocks

class Info(ctypes.Structure):  # glibc's struct mallinfo2
    _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd",
                                                     "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]

libc = ctypes.CDLL(None)
libc.mallinfo2.restype = Info
taken = map_big_blocks() if sys.argv[1] == "set" else None
block = bytearray(4 << 20)  # a fetch response's size, freed, then another one
del block
block = bytearray(4 << 20)
print(taken, libc.mallinfo2().hblkhd >= 4 << 20)
"""


@pytest.mark.skipif(not hasattr(ctypes.CDLL(None), "mallinfo2"), reason="glibc's allocator only")
def test_the_worker_gives_big_blocks_back_to_the_system() -> None:
    """`run_worker` calls `map_big_blocks`: a block as big as a Kafka fetch response is mapped on
    its own (and unmapped when freed) even after one of its size was freed — where glibc, left to
    itself, carves the second one from the heap."""
    def run(mode: str) -> list[str]:
        out = subprocess.run([sys.executable, "-c", MAPPED, mode], capture_output=True, text=True, check=True,
                             timeout=60)
        return out.stdout.split()

    assert run("default") == ["None", "False"]
    assert run("set") == ["True", "True"]


@dataclass
class StageEvent:
    """A stage message as a Faust agent hands it over (its record: `Record`)."""

    message: Record


def test_the_lowest_watermark_released_is_what_ingest_waits_for(tmp_path: Path, sent: Sent) -> None:
    """`lowest_released`: the lowest watermark any stage partition of the worker has released —
    the project stage's waits for the actor stage — and nothing for partitions it no longer holds."""
    app = new_app(tmp_path)
    settings = app.sunset_settings
    outputs = Outputs(app.topic("f"), app.topic("d"), Metrics())
    projects = ProjectHandler(settings, app.tables["projects"], outputs)
    actors = ActorHandler(settings, app.tables["actors"], app.topic(f"{APP}-by-project"), outputs)
    download = event("repository_download_operation", 1, project="a/x", ident=1)
    topic = f"{APP}-by-project"

    async def scenario() -> list[float | None]:
        seen = [lowest_released(projects, actors)]
        await projects.handle([StageEvent(Record(stage_message(download, through=9), topic, 2, 0))])
        seen.append(lowest_released(projects, actors))
        # partition 1: the input's watermark at 5 s, the actor stage's only at 3 s
        ts = BASE + 5
        late = encode_lines([input_report(1, {0: ts}, {0}),
                             *(actors_report(4, {p: BASE + 3}) for p in range(4))])[0]
        await projects.handle([StageEvent(Record(late, topic, 1, 0))])
        seen.append(lowest_released(projects, actors))
        await actors.handle([StageEvent(Record(stage_message(through=7), f"{APP}-by-actor", 0, 0))])
        seen.append(lowest_released(projects, actors))
        projects.forget()
        seen.append(lowest_released(projects, actors))
        return seen

    seen = asyncio.run(scenario())
    assert seen == [None, nextafter(BASE + 9, inf), BASE + 3, BASE + 3, nextafter(BASE + 7, inf)]


def sourced(raw: dict[str, Any], src: list[int]) -> dict[str, Any]:
    """A stage record as ingest forwards it: compacted, with its source coordinates."""
    out = normalize(raw)
    assert not isinstance(out, Rejected)
    return {**compact(out), "src": src}


def test_a_record_the_stored_state_applied_is_skipped_by_a_worker_that_never_saw_it(
        tmp_path: Path, sent: Sent) -> None:
    """A stage partition looks a record up only when its source coordinates are at or below the
    highest it has seen (`_KeyedHandler._tops`); after a restart that includes what its stored
    values applied. So a record applied before the restart, delivered again to a worker that has
    only the table, is skipped, and the next one is applied."""
    first, second = (event("repository_download_operation", i, project="a/x", ident=f"d{i}") for i in (1, 2))
    partition = partition_for("a/x", 4)
    done = (input_report(1, {0: BASE + 9}, {0}), *(actors_report(4, {p: nextafter(BASE + 9, inf)}) for p in range(4)))

    async def run(app: Any, *records: dict[str, Any]) -> None:
        (message,) = encode_lines([*records, *done])
        async with app.agents["projects"].test_context() as agent:
            await agent.put(message, partition=partition, wait=False)
            await until(lambda: any(t == f"{APP}-projects-changelog" and str(k).startswith(MARKER_PREFIX)
                                    for t, k, _, _ in sent))

    before = new_app(tmp_path / "before")
    asyncio.run(run(before, sourced(first, [0, 5, 0])))
    stored = before.tables["projects"].data["a/x"]
    assert (stored["downloads"], stored["src"]) == (
        {"repository_download_operation": 1, "public_repository_download_operation": 0}, {"0": [5, 0]})

    sent.clear()
    after = new_app(tmp_path / "after")  # a restarted worker: the stored state, no memory of the records
    restored = orjson.loads(orjson.dumps(stored))
    restored["seen"] = {}  # its ids expired (`dedup_ttl`): only the source coordinates know it was applied
    after.tables["projects"].data["a/x"] = restored
    asyncio.run(run(after, sourced(first, [0, 5, 0]), sourced(second, [0, 6, 0])))
    value = after.tables["projects"].data["a/x"]
    assert (value["downloads"], value["src"]) == (  # the first once, the second once
        {"repository_download_operation": 2, "public_repository_download_operation": 0}, {"0": [6, 0]})
