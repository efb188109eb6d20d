"""The worker's own code in one process, without Kafka: what an event costs ingest and the two stages.

Run by hand (never part of the test suite):

    .venv/bin/python bench/stream_inprocess.py                        # 100,000 events, CPU seconds, best of 3
    PYTHONHASHSEED=0 valgrind --tool=callgrind --instr-atstart=no \\
        .venv/bin/python bench/stream_inprocess.py --events 20000 --repeat 1 --callgrind
                                            # instructions of the measured part only ("Collected")

Ingest's `Router` and the two stage handlers of `streams.worker` (with the app's real tables, memory
store) run over the bench's synthetic events (`stream_events.py`) as one worker on one input and one
stage partition would; a stand-in for the producer records every send instead of a broker: route
batches of `--batch` events, and after every `--take` of them the actor stage takes its new stage
messages, then the project stage (with the accesses and progress the actors sent); at the end the
input is reported idle and the rest is released. What is measured is parse, route, encode, decode,
hold, release, the detectors and the changelog's encoding — not the Kafka clients, Faust's streams
or the event loop's waits (`bench/stream_bench.py` measures the whole worker).

Before any figure is printed, the findings the stages sent and the tallies they stored must equal the
replay's document of the same events (exit 1 otherwise). CPU time on a shared machine moves by 10-20 %
between runs of the same code; callgrind's instruction count of the measured part (`--callgrind`:
counting is switched on around it with `callgrind_control`) moves by far less than 1 % — use it to
A/B a change to the Python (run it in two checkouts), and the time only as a rough guide (the
collector's scans and encoding the table's values wait on memory, which instructions do not show).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from faust.transport.drivers.aiokafka import Producer
from stream_events import generate

from streams.eventtime import input_report
from streams.metrics import Metrics
from streams.replay import replay_file
from streams.settings import DetectorSettings, load_settings
from streams.worker.agents import ActorHandler, Outputs, ProjectHandler
from streams.worker.app import collect_less, create_app
from streams.worker.ingest import Router
from streams.worker.web import tallies

APP = "inprocess"
Sends = dict[str, list[tuple[bytes | None, bytes | None, int | None]]]


@dataclass
class Message:
    """What the router and the stages read of a Kafka record."""

    value: bytes
    topic: str
    partition: int
    offset: int
    key: bytes | None = None


@dataclass
class Delivered:
    """A stage message as a Faust agent hands it over."""

    message: Message


def record_sends(sends: Sends) -> None:
    """Every send of the app's producer is recorded in `sends` (topic → (key, value, partition); a
    changelog record only counted), already delivered; no broker."""

    async def send(self: Any, topic: str, key: bytes | None, value: bytes | None, partition: int | None,
                   timestamp: Any, headers: Any) -> Any:
        # a changelog record is counted, not kept: a broker's client copies it and lets it go
        sends[topic].append((None, None, partition) if topic.endswith("-changelog") else (key, value, partition))
        done = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done

    Producer.send = send  # type: ignore[method-assign]


class Stages:
    """The router and both stages of one app, fed from the recorded sends."""

    def __init__(self, lateness: float, data_dir: Path, sends: Sends) -> None:
        settings = load_settings("dev", broker="kafka://127.0.0.1:9", partitions=1, app_id=APP,
                                 data_dir=data_dir, allowed_lateness=lateness)
        self.app = create_app(settings)
        self.app.finalize()
        topic = self.app.topic
        by_project, by_actor = topic(f"{APP}-by-project"), topic(f"{APP}-by-actor")
        outputs = Outputs(topic(f"{APP}-findings"), topic(f"{APP}-dead"), Metrics())
        self.router = Router(settings, by_project, by_actor, outputs)
        self.actors = ActorHandler(settings, self.app.tables["actors"], by_project, outputs)
        self.projects = ProjectHandler(settings, self.app.tables["projects"], outputs)
        self.sends = sends
        self.read: dict[str, int] = defaultdict(int)  # per stage topic: sends handed to its stage so far

    def delivered(self, topic: str) -> list[Delivered]:
        """The stage messages sent to `topic` since the last call, with their offsets."""
        new = self.sends[topic][self.read[topic]:]
        start = self.read[topic]
        self.read[topic] += len(new)
        return [Delivered(Message(value or b"", topic, 0, start + i, key)) for i, (key, value, _) in enumerate(new)]

    async def stages(self) -> None:
        for topic, handler in ((f"{APP}-by-actor", self.actors), (f"{APP}-by-project", self.projects)):
            messages = self.delivered(topic)
            if messages:
                await handler.handle(messages)

    async def run(self, lines: list[bytes], batch: int, take: int) -> None:
        router = self.router
        for start in range(0, len(lines), batch * take):
            for first in range(start, min(len(lines), start + batch * take), batch):
                routed = await router.route([Message(lines[i], "input", 0, i)
                                             for i in range(first, min(len(lines), first + batch))])
                await router.send(routed, input_report(1, dict(router.newest), set()))  # as ingest sends them
            await self.stages()
        await router.report(input_report(1, dict(router.newest), {0}))  # drained: idle, the rest is released
        for _ in range(3):  # actors release, forward accesses and report; projects release
            await self.stages()

    def results(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The findings sent (the last state of each) and the tallies stored."""
        findings = {key.decode(): json.loads(value) for key, value, _ in self.sends[f"{APP}-findings"]
                    if key is not None and value is not None}
        return findings, tallies(self.app.tables["projects"])


def callgrind(switch: str) -> None:
    """Switch callgrind's instrumentation of this process on or off (when run under callgrind)."""
    subprocess.run(["callgrind_control", "-i", switch, str(os.getpid())], capture_output=True, check=False)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=6)
    parser.add_argument("--repeat", type=int, default=3, help="runs in this process, each from empty tables")
    parser.add_argument("--batch", type=int, default=2000, help="events per route batch (SUNSET_BATCH_SIZE)")
    parser.add_argument("--take", type=int, default=6, help="route batches per stage batch")
    parser.add_argument("--lateness", type=float, default=150.0)
    parser.add_argument("--callgrind", action="store_true", help="count instructions of the measured part only")
    return parser.parse_args()


def main() -> int:
    args = parse_args()
    lines = [json.dumps(event).encode() for event in generate(args.events, args.seed)]
    with tempfile.TemporaryDirectory(prefix="sunset-inprocess-") as tmp:
        path = Path(tmp) / "events.jsonl"
        path.write_bytes(b"\n".join(lines) + b"\n")
        doc = replay_file(path, DetectorSettings(allowed_lateness=args.lateness))
        expected = {finding["id"]: finding for finding in doc["findings"]}
        sends: Sends = defaultdict(list)
        record_sends(sends)
        best = float("inf")
        for run in range(args.repeat):
            sends.clear()
            stages = Stages(args.lateness, Path(tmp) / f"run-{run}", sends)
            collect_less()  # the collector as the worker sets it (`run_worker`)
            if args.callgrind:
                callgrind("on")
            start = time.process_time()
            asyncio.run(stages.run(lines, args.batch, args.take))
            seconds = time.process_time() - start
            if args.callgrind:
                callgrind("off")
            findings, counted = stages.results()
            if findings != expected or counted != doc["downloads"]:
                print(f"the stages' results differ from the replay's: {len(findings)} findings against "
                      f"{len(expected)}, tallies {'equal' if counted == doc['downloads'] else 'differ'}; "
                      "no figure printed", file=sys.stderr)
                return 1
            best = min(best, seconds)
            writes = sum(len(records) for topic, records in sends.items() if topic.endswith("-changelog"))
            print(f"run {run + 1}: results equal the replay's ({len(findings)} findings); CPU {seconds:.2f} s = "
                  f"{args.events / seconds:,.0f} events per CPU second; {writes / args.events:.2f} changelog "
                  "records per event")
        print(f"best of {args.repeat}: {args.events / best:,.0f} events per CPU second")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
