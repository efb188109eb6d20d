"""The distributed instance scan for real: `sunset instance worker` (the stream's Faust app with the
scan agent) in a subprocess on the embedded Tansu broker, `sunset instance publish` putting the GitLab
stand-in's group on the topic, and the table `instance-findings` read through the worker's view — one
row per project, with the same findings, files and status as the one-machine `sunset scan --gitlab`.
Then a GitLab system-hook push event, posted to the receiver's /system-hooks, rescans the project that
changed."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from gitlab_standin import TOKEN, StandIn
from streamkit import ROOT, broker_fixture, get_json, try_json, wait_for  # noqa: F401 - `broker`
from test_instance_scan import acme

from scanner.cli import main
from scanner.instance.distributed import TOPIC_SUFFIX
from streams.dev import EmbeddedBroker, free_port
from streams.receiver import HOOK_TOKEN_HEADER, INSTANCE_TOPIC_SUFFIX, receiver_runner
from streams.settings import load_settings

APP = "sunset-instance-e2e"
TOPIC = f"{APP}-instance-projects"


@pytest.fixture(name="worker")
def worker_fixture(broker: EmbeddedBroker, tmp_path: Path) -> Iterator[tuple[str, str, Any]]:
    inst = acme()
    with StandIn(inst) as gitlab:
        port = free_port()
        log = tmp_path / "worker.log"
        env = {**os.environ, "SUNSET_GITLAB_TOKEN": TOKEN, "SUNSET_APP_ID": APP, "SUNSET_INPUT_TOPIC": f"{APP}-in",
               "SUNSET_FINDINGS_TOPIC": f"{APP}-findings", "SUNSET_DEAD_LETTER_TOPIC": f"{APP}-dead"}
        command = [sys.executable, "-m", "scanner.cli", "instance", "worker", "--gitlab", gitlab,
                   "--broker", broker.url, "--profile", "dev", "--partitions", "2", "--target", "18.0",
                   "--web-port", str(port), "--data-dir", str(tmp_path / "faust"),
                   "--cache-dir", str(tmp_path / "cache"), "--loglevel", "info"]
        with log.open("ab") as out:
            process = subprocess.Popen(command, env=env, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
        try:
            url = f"http://127.0.0.1:{port}"
            wait_for(f"the worker on {url} ({log})", lambda: process.poll() is None and try_json(url + "/health"))
            if process.poll() is not None:
                pytest.fail(f"the worker exited: {log.read_text()[-3000:]}")
            yield gitlab, url, inst
        finally:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


async def hooks(bootstrap_url: str, bodies: list[tuple[str, bytes]]) -> list[tuple[int, Any]]:
    """`sunset stream receive`'s app on 127.0.0.1: POST each body to /system-hooks with a token."""
    settings = load_settings("dev", broker=bootstrap_url, token="hook-secret", app_id=APP, partitions=2)
    runner = receiver_runner(settings)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    answers: list[tuple[int, Any]] = []
    try:
        async with aiohttp.ClientSession() as session:
            for _ in range(300):
                async with session.get(f"http://127.0.0.1:{port}/health") as response:
                    if response.status == 200:
                        break
                await asyncio.sleep(0.1)
            for token, body in bodies:
                async with session.post(f"http://127.0.0.1:{port}/system-hooks", data=body, headers={
                        "X-Gitlab-Event": "System Hook", HOOK_TOKEN_HEADER: token,
                        "Content-Type": "application/json"}) as response:
                    answers.append((response.status, await response.json()))
    finally:
        await runner.cleanup()
    return answers


def found(findings: list[dict[str, Any]]) -> list[tuple[str, str, int, int]]:
    return sorted((f["rule_id"], f["path"], f["line"], f["column"]) for f in findings)


def test_a_group_published_becomes_the_one_machine_scan(worker: tuple[str, str, Any], broker: EmbeddedBroker,
                                                        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    gitlab, url, inst = worker
    monkeypatch.setenv("SUNSET_GITLAB_TOKEN", TOKEN)
    monkeypatch.setenv("SUNSET_APP_ID", APP)
    assert main(["scan", "--gitlab", gitlab, "--group", "acme", "--target", "18.0", "--format", "json",
                 "--output", str(tmp_path / "one.json"), "--cache-dir", str(tmp_path / "one-cache")]) == 1
    one = json.loads((tmp_path / "one.json").read_text())
    capsys.readouterr()
    assert main(["instance", "publish", "--gitlab", gitlab, "--group", "acme", "--broker", broker.url,
                 "--profile", "dev", "--partitions", "2"]) == 0
    assert capsys.readouterr().out == f"published {len(one['projects'])} projects to {TOPIC}\n"

    names = sorted(p["project"] for p in one["projects"])
    rows = wait_for("a row per project", lambda: (r := try_json(url + "/instance-findings")) and sorted(r) == names
                    and r)
    for p in one["projects"]:
        row = rows[p["project"]]
        reached = {u["path"] for u in p["files"]}
        assert (row["status"], row["ref"], row["root"]) == (p["status"], p["ref"], p["root"])
        assert row["files"] == p["files"]
        assert found(row["findings"]) == found([f for f in one["findings"] if f["path"] in reached])
    assert found(rows["acme/apps/web"]["findings"]) == [
        ("cs-disable-dependency-list", "acme/platform/ci-templates@main:build.yml", 2, 3),
        ("dast-proxy-based-variables", "acme/apps/web@main:ci/test.yml", 3, 5),
        ("license-scanning-report-artifact", "acme/platform/components@1.2.0:templates/scan.yml", 8, 7),
        ("license-scanning-templates", "acme/apps/web@main:.gitlab-ci.yml", 6, 15),
    ]

    # A push to acme/apps/web drops the License-Scanning template; GitLab's system hook says so
    # (doc/administration/system_hooks.md, "Push events"), keyed by project id as the feeder keys it.
    web = inst.project("acme/apps/web")
    web.files["main"][".gitlab-ci.yml"] = web.files["main"][".gitlab-ci.yml"].replace(
        "  - template: Security/License-Scanning.gitlab-ci.yml\n", "")
    push = {"event_name": "push", "ref": "refs/heads/main", "project_id": web.id,
            "project": {"path_with_namespace": "acme/apps/web", "default_branch": "main"}}
    other = {"event_name": "user_create", "user_id": 41, "username": "js"}
    assert asyncio.run(hooks(broker.url, [
        ("wrong", json.dumps(push).encode()), ("hook-secret", b"{not json"),
        ("hook-secret", json.dumps(other).encode()), ("hook-secret", json.dumps(push).encode())])) == [
        (401, {"error": "invalid or missing X-Gitlab-Token"}),
        (400, {"error": "invalid JSON: unexpected character, expected a string key: line 1 column 2 (char 1)"}),
        (200, {"ignored": "user_create"}), (200, {"accepted": 1, "dead_letters": 0})]
    rescanned = wait_for("the pushed project rescanned", lambda: (r := try_json(
        url + "/instance-findings?project=acme/apps/web")) and "license-scanning-templates" not in {
        f["rule_id"] for f in r["acme/apps/web"]["findings"]} and r)
    assert sorted(rescanned) == ["acme/apps/web"]
    assert [f[0] for f in found(rescanned["acme/apps/web"]["findings"])] == [
        "cs-disable-dependency-list", "dast-proxy-based-variables", "license-scanning-report-artifact"]
    assert get_json(url + "/instance-findings")["acme/apps/api"] == rows["acme/apps/api"]


def test_the_receiver_and_the_scan_name_one_topic() -> None:
    assert INSTANCE_TOPIC_SUFFIX == TOPIC_SUFFIX == "-instance-projects"
