"""A seeded, GitLab-shaped audit-event stream for the tests that compare the worker with the replay.

Everything the detectors care about happens in it, spread so that partitioning matters: CI jobs
log in with their job token on project A and use it on project B a few seconds later (the two
events are keyed by different projects, so they land on different input partitions), allowlist
entries are added and removed, users clone and download, some scrape many projects, a few projects
are downloaded under both types, anonymous users download public projects, and 1.5 % of the events
are delivered twice. Deliveries are out of order by up to `jitter` seconds of event time (less
than the allowed lateness).
"""

from __future__ import annotations

import json
import random
import zlib
from typing import Any

from streamkit import at

CLONE = {"custom_message": {"protocol": "http", "action": "git-upload-pack"}}
PUSH = {"custom_message": {"protocol": "ssh", "action": "git-receive-pack"}}


class _Stream:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.events: list[tuple[float, dict[str, Any]]] = []
        self.projects = [f"g{g}/app-{i}" for g in range(4) for i in range(12)]
        self.ci = [f"ci/job-{i}" for i in range(6)]
        self.public = set(self.projects[2::3])  # not the two projects of the snapshot
        self.flipping = set(self.projects[1::10])  # downloaded under both types
        self.users = list(range(100, 160))

    def add(self, kind: str, second: float, project: str, user: int, **extra: Any) -> None:
        body = {"id": f"e{len(self.events)}", "event_type": kind, "created_at": at(second), "author_id": user,
                "author_name": f"User {user}", "entity_type": "Project", "entity_path": project,
                "entity_id": zlib.crc32(project.encode()) % 10_000, "ip_address": f"10.1.{user % 250}.1", "details": {}}
        body.update(extra)
        self.events.append((second, body))

    def one(self, second: float) -> None:
        rng, roll = self.rng, self.rng.random()
        user, project = rng.choice(self.users), rng.choice(self.projects)
        if roll < 0.30:
            self.add("repository_git_operation", second, project, user, details=CLONE)
        elif roll < 0.36:
            self.add("repository_git_operation", second, project, user, details=PUSH)
        elif roll < 0.50:
            public = (project in self.public) != (project in self.flipping and rng.random() < 0.5)
            kind = "public_repository_download_operation" if public else "repository_download_operation"
            self.add(kind, second, project, user)
        elif roll < 0.53:
            self.add("public_repository_download_operation", second, rng.choice(sorted(self.public)), -1,
                     author_name="An unauthenticated user")
        elif roll < 0.65:
            origin = rng.choice(self.ci)
            self.add("user_authenticated_using_job_token", second, origin, user, target_type="Ci::Build")
            self.add("job_artifact_downloaded", second + rng.uniform(0.2, 4.5), project, user)
        elif roll < 0.67:
            change = "added to" if rng.random() < 0.6 else "removed from"
            kind = "secure_ci_job_token_project_" + ("added" if change == "added to" else "removed")
            origin = rng.choice(self.ci)
            message = f"Project {origin} was {change} inbound list of allowed projects for {project}"
            self.add(kind, second, project, user, details={"custom_message": message})
        elif roll < 0.672:
            scraper = rng.choice(self.users)
            for n, target in enumerate(rng.sample(self.projects, rng.randint(11, 16))):
                self.add("repository_git_operation", second + n * 3.0, target, scraper, details=CLONE)
        else:
            self.add("merge_request_create", second, project, user)


def generate(seed: int, count: int = 6000, jitter: float = 20.0, order: int | None = None,
             busy: int = 0) -> list[bytes]:
    """`count` events or so, one JSON line each, in delivery order: the events are the seed's, the
    delivery order `order`'s (the seed's by default). `busy`: that many more downloads, of
    `busy/repo` by 50 users, spread over the same time."""
    rng = random.Random(seed)
    stream = _Stream(rng)
    second = 0.0
    while len(stream.events) < count:
        second += rng.expovariate(1.0)
        stream.one(second)
    for n in range(busy):
        stream.add("repository_download_operation", n * second / busy, "busy/repo", 100 + n % 50)
    rng = random.Random(seed if order is None else order)
    deliveries = [(created + rng.uniform(0, jitter), n, body) for n, (created, body) in enumerate(stream.events)]
    repeats = [(when + rng.uniform(0, jitter / 4), -n - 1, body)
               for when, n, body in rng.sample(deliveries, len(deliveries) * 15 // 1000)]
    return [json.dumps(body).encode() for _, _, body in sorted(deliveries + repeats, key=lambda d: (d[0], d[1]))]


def snapshot() -> dict[str, Any]:
    """A REST API snapshot for two of the projects, taken before the stream."""
    return {"taken_at": "2025-06-02T08:00:00Z", "projects": {
        "g0/app-0": {"inbound_enabled": False, "allowlist": [{"id": 2000, "path_with_namespace": "ci/job-0"}],
                     "groups_allowlist": []},
        "g1/app-1": {"inbound_enabled": True, "allowlist": [],
                     "groups_allowlist": [{"id": 7, "web_url": "https://gitlab.example.com/groups/ci"}]}}}
