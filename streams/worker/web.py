"""The worker's views: health, download tallies, open findings, Prometheus metrics.

Each worker serves the partitions it owns (one worker in `sunset stream dev` owns them all); on a
cluster, ask every worker or read the findings topic, which holds every finding (see docs).
"""

from __future__ import annotations

from typing import Any

import faust
from faust.web import Request, Response, View

from streams.detectors.registry import REGISTRY, Registry
from streams.eventtime import progress_key
from streams.metrics import CONTENT_TYPE, Metrics
from streams.worker.batching import MARKER_PREFIX, is_marker


def _values(table: Any) -> list[tuple[str, Any]]:
    return sorted((k, v) for k, v in table.data.items() if v and not is_marker(k))


def _count(table: Any) -> int:
    """How many projects or users a table holds: its keys but sunset's own (a flush marker and a
    progress record per stage partition at most). A scrape looks up those few names instead of
    walking the table."""
    data = table.data
    own = sum(name in data for p in range(table.partitions) for name in (f"{MARKER_PREFIX}{p}", progress_key(p)))
    return len(data) - own


def tallies(projects: Any, project: str | None = None) -> dict[str, dict[str, int]]:
    """Download counts per project path (this worker's partitions)."""
    return {key: dict(value["downloads"]) for key, value in _values(projects)
            if any(value["downloads"].values()) and (project is None or key == project)}


def open_findings(projects: Any, actors: Any, registry: Registry = REGISTRY) -> list[dict[str, Any]]:
    """What each detector shows of each value (open gaps, visibility changes, the latest
    mass-download alert per user), as JSON."""
    out: list[dict[str, Any]] = []
    for table, detectors in ((projects, registry.project_detectors), (actors, registry.actor_detectors)):
        for _, value in _values(table):
            for detector in detectors:
                out += [finding.as_dict() for finding in detector.open_findings(value)]
    return sorted(out, key=lambda f: (f["kind"], f["id"]))


def register_views(app: faust.App, projects: Any, actors: Any, metrics: Metrics) -> None:
    """Add the pages to a Faust app."""

    @app.page("/health")
    async def health(web: View, request: Request) -> Response:
        assigned: dict[str, list[int]] = {}
        for tp in sorted(app.consumer.assignment()):
            assigned.setdefault(tp.topic, []).append(tp.partition)
        return web.json({"status": "ok", "app": app.conf.id, "assigned": assigned})

    @app.page("/ready")
    async def ready(web: View, request: Request) -> Response:
        """200 once the tables are recovered from their changelogs and no rebalance is under way;
        503 before (the views would show partial state)."""
        recovery: Any = getattr(app.tables, "recovery")  # noqa: B009 - TableManager has it; its interface type does not
        state = {"recovered": recovery.completed.is_set() and not recovery.in_recovery,
                 "rebalancing": bool(app.rebalancing), "assigned": bool(app.consumer.assignment())}
        ok = state["recovered"] and not state["rebalancing"] and state["assigned"]
        return web.json({"ready": ok, **state}, status=200 if ok else 503)

    @app.page("/tallies")
    async def tallies_view(web: View, request: Request) -> Response:
        return web.json(tallies(projects, request.query.get("project")))

    @app.page("/findings")
    async def findings_view(web: View, request: Request) -> Response:
        return web.json(open_findings(projects, actors))

    @app.page("/metrics")
    async def metrics_view(web: View, request: Request) -> Response:
        gauges = {"sunset_stream_projects": _count(projects), "sunset_stream_users": _count(actors)}
        return web.text(metrics.render(gauges), content_type=CONTENT_TYPE)
