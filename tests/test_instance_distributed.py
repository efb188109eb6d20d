"""The instance scan as Faust work (`scanner.instance.distributed`): project names, ids and system-hook
push events on a topic, one row per project in a table — first as plain functions over a dict, then on
a Faust app through the agent's `test_context()` (no broker; the producer's sends are recorded)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import faust
import pytest
from faust.transport.drivers.aiokafka import Producer
from gitlab_standin import TOKEN, StandIn
from test_instance_scan import acme

from scanner.commands.scan import load
from scanner.core.versions import Version
from scanner.engine.scan import ScanOptions
from scanner.instance.distributed import TABLE, Worker, register, scan_message
from scanner.instance.run import InstanceOptions


def worker(url: str, tmp: Path) -> Worker:
    return Worker(load(None), ScanOptions(target=Version.parse("18.0")),
                  InstanceOptions(url, "acme", token=TOKEN, cache_dir=tmp / "cache"))


WEB = [
    ("license-scanning-templates", "acme/apps/web@main:.gitlab-ci.yml", 6, 15),
    ("dast-proxy-based-variables", "acme/apps/web@main:ci/test.yml", 3, 5),
    ("cs-disable-dependency-list", "acme/platform/ci-templates@main:build.yml", 2, 3),
    ("license-scanning-report-artifact", "acme/platform/components@1.2.0:templates/scan.yml", 8, 7),
]


def found(row: dict[str, Any]) -> list[tuple[str, str, int, int]]:
    return [(f["rule_id"], f["path"], f["line"], f["column"]) for f in row["findings"]]


def test_messages_become_rows(tmp_path: Path) -> None:
    inst = acme()
    with StandIn(inst) as url:
        w = worker(url, tmp_path)
        table: dict[str, Any] = {}
        web = inst.project("acme/apps/web")
        assert web is not None
        assert scan_message(w, table, b'{"project": "acme/apps/api"}') == "acme/apps/api"
        push = {"object_kind": "push", "event_name": "push", "project_id": web.id,
                "project": {"path_with_namespace": "acme/apps/web"}}
        assert scan_message(w, table, json.dumps(push).encode()) == "acme/apps/web"
        assert scan_message(w, table, json.dumps({"project_id": web.id}).encode()) == "acme/apps/web"
        assert scan_message(w, table, b'{"event_name": "user_create", "user_id": 4}') is None
        assert scan_message(w, table, b"not json") is None
        assert scan_message(w, table, b'{"project": "acme/secret/vault"}') == "acme/secret/vault"
    assert sorted(table) == ["acme/apps/api", "acme/apps/web", "acme/secret/vault"]
    assert sorted(found(table["acme/apps/web"]), key=lambda f: (f[1], f[2])) == sorted(WEB, key=lambda f: (f[1], f[2]))
    # a row stands alone: the shared template's finding is in every project that reaches it
    assert ("cs-disable-dependency-list", "acme/platform/ci-templates@main:build.yml", 2, 3) in found(
        table["acme/apps/api"])
    assert table["acme/secret/vault"]["status"] == "error"
    assert table["acme/secret/vault"]["errors"] == [
        {"path": "acme/secret/vault", "line": None,
         "message": "project `acme/secret/vault`: 404 Not Found (or no access)"}]


def test_the_agent_on_a_faust_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async def fake_send(self: Any, topic: str, key: bytes | None, value: bytes | None, partition: int | None,
                        timestamp: Any, headers: Any) -> Any:  # no broker: nothing leaves the process
        done = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done

    monkeypatch.setattr(Producer, "send", fake_send)

    inst = acme()
    with StandIn(inst) as url:
        app = faust.App("sunset-instance-test", broker="kafka://127.0.0.1:9", store="memory://",
                        datadir=str(tmp_path / "faust"), web_enabled=False)
        agent = register(app, worker(url, tmp_path), partitions=1)
        app.finalize()

        async def scenario() -> None:
            async with agent.test_context() as running:
                await running.put(b'{"project": "acme/apps/web"}')
                for _ in range(800):
                    if "acme/apps/web" in app.tables[TABLE].data:
                        return
                    await asyncio.sleep(0.01)
                pytest.fail("no row in 8 s")

        asyncio.run(scenario())
    row = app.tables[TABLE].data["acme/apps/web"]
    assert sorted(found(row)) == sorted(WEB)


def test_instance_commands_refuse_bad_input(capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from scanner.cli import main

    monkeypatch.delenv("CI_SERVER_URL", raising=False)
    assert main(["instance", "publish", "--group", "acme"]) == 2
    assert capsys.readouterr().err == (
        "sunset: --gitlab URL is needed (inside a GitLab CI job, CI_SERVER_URL is used)\n")
    assert main(["instance", "worker", "--gitlab", "ftp://gitlab.example"]) == 2
    assert capsys.readouterr().err == "sunset: --gitlab: `ftp://gitlab.example` is not an http(s) URL\n"
    assert main(["instance", "publish", "--gitlab", "http://127.0.0.1:9", "--group", "acme", "--partitions", "0"]) == 2
    assert capsys.readouterr().err.startswith("sunset: 1 validation error for StreamSettings partitions ")


def test_a_message_about_a_shared_template_refreshes_it(tmp_path: Path) -> None:
    """The worker keeps a template project's files for the projects that include it; a message about
    the template project (its push) drops them, so the next includer's scan reads the new version."""
    inst = acme()
    with StandIn(inst) as url:
        w = worker(url, tmp_path)
        table: dict[str, Any] = {}
        scan_message(w, table, b'{"project": "acme/apps/web"}')
        shared = ("cs-disable-dependency-list", "acme/platform/ci-templates@main:build.yml", 2, 3)
        assert shared in found(table["acme/apps/web"])
        templates = inst.project("acme/platform/ci-templates")
        assert templates is not None
        templates.files["main"]["build.yml"] = "# the shared build, fixed\nbuild:\n  script: [make]\n"
        scan_message(w, table, b'{"project": "acme/apps/web"}')
        assert shared in found(table["acme/apps/web"])  # still the copy this worker holds
        scan_message(w, table, json.dumps({"event_name": "push", "project_id": templates.id}).encode())
        scan_message(w, table, b'{"project": "acme/apps/web"}')
    assert sorted(found(table["acme/apps/web"])) == sorted(f for f in WEB if f != shared)
