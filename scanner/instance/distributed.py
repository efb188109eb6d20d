"""The instance scan as work on a Faust app: project ids (or GitLab system-hook push events) on a topic,
a scan agent, a findings table keyed by project — so an instance too large for one machine is scanned
by every worker of the stream's Kafka cluster, and rescanned as pipelines change (docs/instance-scan.md,
"Distributed").

Kafka partitions the topic by project, so each project is scanned by one worker at a time; each worker
keeps its own file store (a shared template is fetched and parsed once per worker and ref) and the
blob cache on its disk. A table row stands alone: it holds every finding of every file the project's
pipeline reaches, shared files included, so any worker's `/findings` view can answer for a project.

`scan_message` is the plain function the agent calls (it takes the table as a mapping, as the stream's
detectors do); `register` wires it onto an app. Faust is imported only by `register`.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from scanner.engine.scan import Scan, ScanOptions
from scanner.instance.api import Api, ApiError
from scanner.instance.run import Collector, InstanceOptions
from scanner.instance.store import BlobCache, Store
from scanner.instance.walk import Context, Walk
from scanner.report.jsonfmt import finding_dict
from scanner.rules.policy import Policy

TOPIC_SUFFIX = "-instance-projects"
TABLE = "instance-findings"


@dataclass
class Worker:
    """One worker's share of the instance scan: a client, a file store, the policies."""

    policies: list[Policy]
    options: ScanOptions
    inst: InstanceOptions
    ctx: Context = field(init=False)

    def __post_init__(self) -> None:
        api = Api(self.inst.url, self.inst.token, self.inst.job_token)
        store = Store(api, BlobCache(self.inst.cache_dir), self.options.max_file_bytes)
        self.ctx = Context(api, store, urlsplit(self.inst.url).netloc, self.inst.ref, self.inst.fetch_remote)


def project_of(message: dict[str, Any]) -> str | int | None:
    """`{"project": "group/name"}`, `{"project_id": 42}`, or a system-hook push event (`event_name:
    push`, `project_id`, `project.path_with_namespace`)."""
    project = message.get("project")
    if isinstance(project, dict):
        project = project.get("path_with_namespace")
    if isinstance(project, str) and project:
        return project
    ident = message.get("project_id")
    return ident if isinstance(ident, int) else None


def scan_project(worker: Worker, ident: str | int) -> dict[str, Any]:
    """One project's row: its record, its findings (shared files' included), its errors."""
    try:
        info = worker.ctx.api.project(ident)
    except ApiError as exc:
        return {"project": str(ident), "status": "error", "findings": [], "errors": [
            {"path": str(ident), "line": None, "message": str(exc)}], "files": []}
    store = worker.ctx.store
    with store.lock:  # a message about a project (a push) makes its files, kept for other projects, stale
        mine = [k for k in store.memo if k.project == info.path]
    store.forget(mine)
    result = Walk(worker.ctx, info).run()
    scan = Scan(worker.policies, worker.options, Path("/"))
    record, _ = Collector(scan, set()).add(result)
    store.forget(k for k in result.files if k.project == result.project)
    report = scan.report
    return {
        "project": record.project, "ref": record.ref, "root": record.root, "status": record.status,
        "files": [{"path": u.path, "how": u.how, "chain": list(u.chain)} for u in record.files],
        "findings": [finding_dict(f) for f in sorted(report.findings, key=lambda f: (
            f.location.path, f.location.line, f.location.column, f.rule_id))],
        "errors": [{"path": e.path, "line": e.line, "message": e.message} for e in report.errors],
    }


def row_for(worker: Worker, raw: bytes) -> dict[str, Any] | None:
    """The row for the project a message names; None for a message that names none (left alone: system
    hooks send many other events)."""
    try:
        message = json.loads(raw)
    except ValueError:
        return None
    ident = project_of(message) if isinstance(message, dict) else None
    return None if ident is None else scan_project(worker, ident)


def scan_message(worker: Worker, table: MutableMapping[str, Any], raw: bytes) -> str | None:
    """Scan the project a message names and write its row; the project's path, or None."""
    row = row_for(worker, raw)
    if row is None:
        return None
    table[row["project"]] = row
    return str(row["project"])


def topic_name(app_id: str) -> str:
    return f"{app_id}{TOPIC_SUFFIX}"


def feed(api: Api, group: str, archived: bool) -> Iterator[tuple[bytes, bytes]]:
    """The feeder's messages: one per project of the group (subgroups included), keyed by the project
    id — the key a system-hook push event for the project carries too, so both land in one partition."""
    for info in api.group_projects(group, archived):
        yield str(info.id).encode(), json.dumps({"project_id": info.id, "project": info.path}).encode()


def _guarded(worker: Worker, raw: bytes) -> dict[str, Any] | None:
    """`row_for`, but a message never stops the agent: an unexpected failure is the project's error row."""
    try:
        return row_for(worker, raw)
    except Exception as exc:  # noqa: BLE001 - one project's failure is recorded in its row, the agent goes on
        logging.getLogger(__name__).exception("instance scan of %r failed", raw[:200])
        try:
            message = json.loads(raw)
        except ValueError:
            return None
        ident = project_of(message) if isinstance(message, dict) else None
        return None if ident is None else {
            "project": str(ident), "status": "error", "findings": [], "files": [],
            "errors": [{"path": str(ident), "line": None, "message": f"internal error: {type(exc).__name__}"}]}


def register(app: Any, worker: Worker, partitions: int | None = None) -> Any:
    """The topic `<app id>-instance-projects`, the table `instance-findings`, the agent `instance-scan`
    and the view `/instance-findings` (this worker's rows; `?project=` for one) on a Faust app (the
    stream's, from `streams.worker.app.create_app`, or any other); returns the agent. The scan runs in a thread
    (python-gitlab blocks); the row is written from the agent, in its event."""
    topic = app.topic(topic_name(app.conf.id), partitions=partitions, key_serializer="raw",
                      value_serializer="raw", internal=True)  # created with the table's partitions
    table = app.Table(TABLE, partitions=partitions)

    async def instance_scan(stream: Any) -> None:
        async for raw in stream:
            row = await asyncio.to_thread(_guarded, worker, raw)
            if row is not None:
                table[row["project"]] = row

    async def rows_view(web: Any, request: Any) -> Any:
        wanted = request.query.get("project")
        return web.json({k: v for k, v in sorted(table.data.items()) if wanted is None or k == wanted})

    app.page("/instance-findings")(rows_view)
    return app.agent(topic, name="instance-scan")(instance_scan)
