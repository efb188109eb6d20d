"""`sunset stream …` on the command line: the parser, the light import, and `sunset stream dev`."""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import IO

import pytest
from streamkit import (  # noqa: F401 - the `broker` fixture
    ROOT,
    SAMPLE,
    answers,
    broker_fixture,
    findings_table,
    limits,
    produce_records,
    read_topic,
    stream_cli,
    try_json,
    wait_for,
)

from streams.dev import EmbeddedBroker, free_port
from streams.replay import replay_file

from conftest import sunset


def test_stream_subcommands_are_registered() -> None:
    out = sunset("stream", "--help", cwd=ROOT)
    assert out.returncode == 0
    assert "{replay,worker,receive,publish,findings,dev}" in out.stdout


def test_the_parser_module_imports_nothing_heavy() -> None:
    code = ("import sys, scanner.cli as c; c.build_parser();"
            "heavy = {'faust', 'aiokafka', 'aiohttp', 'mode', 'pydantic_settings', 'orjson'};"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"


def test_receive_refuses_to_start_without_a_token() -> None:
    out = sunset("stream", "receive", "--port", str(free_port()), cwd=ROOT, env={"SUNSET_TOKEN": None},
                 process=True, timeout=60)  # a process: a receiver that starts anyway fails the test, not the run
    assert (out.returncode, out.stderr) == (
        2, "sunset stream receive: the receiver needs a verification token: --token-file FILE or $SUNSET_TOKEN\n")


def test_dev_refuses_a_port_another_process_holds() -> None:
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        taken = other.getsockname()[1]
        out = sunset("stream", "dev", "--port", str(free_port()), "--web-port", str(taken), cwd=ROOT, process=True,
                     timeout=60)
    assert (out.returncode, out.stderr) == (2, f"sunset stream dev: port {taken} on 127.0.0.1 is in use\n")


@pytest.mark.integration
def test_dev_runs_broker_worker_and_receiver_locally(tmp_path: Path) -> None:
    port, web_port, broker_port = free_port(), free_port(), free_port()
    env = {**os.environ, "SUNSET_TOKEN": "dev-token", "SUNSET_PARTITIONS": "2"}
    command = [sys.executable, "-m", "scanner.cli", "stream", "dev", "--port", str(port), "--web-port", str(web_port),
               "--broker-port", str(broker_port), "--load", str(SAMPLE)]
    log = (tmp_path / "dev.log").open("wb")
    dev = subprocess.Popen(command, env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for("the receiver", lambda: dev.poll() is None and answers(f"http://127.0.0.1:{port}/health"))
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/audit-events", method="POST",
            data=b'{"id": 1, "event_type": "repository_download_operation", "entity_path": "dev/try",'
                 b' "created_at": "2025-06-02T10:00:00Z", "author_id": 3}',
            headers={"X-Gitlab-Event-Streaming-Token": "dev-token",
                     "Content-Type": "application/x-www-form-urlencoded"})
        with urllib.request.urlopen(request, timeout=10) as response:
            assert (response.status, response.read()) == (200, b'{"accepted": 1, "dead_letters": 0}')
        expected = replay_file(SAMPLE, limits())["downloads"]
        expected["dev/try"] = {"repository_download_operation": 1, "public_repository_download_operation": 0}
        tallies = wait_for("the tallies", lambda: (t := try_json(f"http://127.0.0.1:{web_port}/tallies")) == expected
                           and t)
        assert tallies == expected
        # the file was published keyed like the receiver keys: the replay's findings, exactly
        final = {f["id"]: f for f in replay_file(SAMPLE, limits())["findings"]}
        records = read_topic(f"127.0.0.1:{broker_port}", "sunset-findings", lambda r: findings_table(r) == final)
        assert findings_table(records) == final
    finally:
        dev.send_signal(signal.SIGTERM)  # as a supervisor stops it: everything goes, as with Ctrl-C
        code = dev.wait(timeout=60)
        log.close()
    assert code == 0, (tmp_path / "dev.log").read_text()[-3000:]
    assert not answers(f"http://127.0.0.1:{port}/health")
    assert not answers(f"http://127.0.0.1:{web_port}/health")
    with socket.socket() as probe:  # the broker is gone too
        assert probe.connect_ex(("127.0.0.1", broker_port)) != 0


def line_within(pipe: IO[bytes], timeout: float = 60.0) -> bytes:
    """The next line of a child's output; a failure, not a hang, if none comes within `timeout`."""
    ready, _, _ = select.select([pipe], [], [], timeout)
    if not ready:
        pytest.fail(f"no line within {timeout:g}s")
    return pipe.readline()


def test_findings_reads_the_topic_as_a_table_then_follows_it(broker: EmbeddedBroker) -> None:
    def record(ident: str, status: str) -> tuple[bytes, bytes]:
        return ident.encode(), json.dumps({"id": ident, "kind": "job_token_allowlist_gap", "status": status}).encode()

    topic = "readback-findings"
    produce_records(broker.bootstrap, topic,
                    [record("gap:b", "open"), record("gap:a", "open"), record("gap:b", "resolved")])
    env = {**os.environ, "SUNSET_BROKER": broker.url, "SUNSET_FINDINGS_TOPIC": topic}
    command = [sys.executable, "-m", "scanner.cli", "stream", "findings"]
    out = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env, check=False, timeout=60)
    assert (out.returncode, out.stderr) == (0, "")
    assert [json.loads(line) for line in out.stdout.splitlines()] == [  # the last state of each, by id
        {"id": "gap:a", "kind": "job_token_allowlist_gap", "status": "open"},
        {"id": "gap:b", "kind": "job_token_allowlist_gap", "status": "resolved"}]
    # started as a shell starts a background job: SIGINT ignored, so Python installs no handler of its own
    follow = subprocess.Popen([*command, "--follow"], stdout=subprocess.PIPE, cwd=ROOT, env=env, bufsize=0,
                              preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        assert follow.stdout is not None
        lines = [line_within(follow.stdout), line_within(follow.stdout)]
        produce_records(broker.bootstrap, topic, [record("gap:a", "resolved")])
        lines.append(line_within(follow.stdout))
        assert [json.loads(line)["status"] for line in lines] == ["open", "resolved", "resolved"]
    finally:
        follow.send_signal(signal.SIGINT)
        assert follow.wait(timeout=30) == 0


@pytest.mark.parametrize("command", [["findings"], ["findings", "--follow"], ["publish", str(SAMPLE)]])
def test_a_broker_that_is_not_there_is_one_line_and_exit_2(command: list[str]) -> None:
    port = free_port()
    done = stream_cli(*command, "--broker", f"kafka://127.0.0.1:{port}")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (f"sunset stream {command[0]}: cannot reach the broker at kafka://127.0.0.1:{port} "
                           "(KafkaConnectionError)\n")
