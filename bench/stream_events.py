"""A synthetic, GitLab-shaped audit-event stream for the stream benchmarks (deterministic per seed).

Shape of the mix (per 100 events, roughly): 30 clones/fetches, 8 pushes, 12 archive downloads
(private/internal projects as `repository_download_operation`, public ones as
`public_repository_download_operation`), 5 anonymous public downloads, 8 CI jobs whose job token
is used on another project 1-3 s later, 30 other project events, 5 user events, a few allowlist
changes; 1.5 % repeated deliveries; now and then a user scraping 30 projects in two minutes.
Every event carries the streaming body's fields (`details` included), ~600 bytes of JSON.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

KINDS = (("clone", 30), ("push", 8), ("archive", 12), ("anonymous", 5), ("job", 8),
         ("project", 30), ("user", 5), ("allowlist", 0.4), ("scrape", 0.05))
OTHER_PROJECT_TYPES = ("merge_request_create", "merge_request_approval_operation", "project_feature_updated",
                       "protected_branch_updated", "ci_variable_updated", "job_artifact_downloaded")


class World:
    """Projects, users and CI dependencies the events are about."""

    def __init__(self, rng: random.Random, projects: int = 5000, users: int = 5000) -> None:
        self.rng = rng
        self.groups = [f"group-{g:02d}" for g in range(40)]
        self.projects = [(1000 + i, self._path(i), rng.random() < 0.3) for i in range(projects)]
        self.users = [(100 + u, f"User {100 + u}", f"203.0.{u // 250}.{u % 250}") for u in range(users)]
        self.deps = {p[0]: rng.sample(range(projects), k=rng.randint(0, 3)) for p in self.projects}

    def _path(self, i: int) -> str:
        sub = f"sub-{i % 7}/" if i % 3 == 0 else ""
        return f"{self.groups[i % len(self.groups)]}/{sub}app-{i:04d}"

    def project(self) -> tuple[int, str, bool]:
        # A few hot projects get most of the traffic, like real instances.
        index = int(self.rng.paretovariate(1.2)) % len(self.projects)
        return self.projects[index if self.rng.random() < 0.3 else self.rng.randrange(len(self.projects))]


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def event(kind: str, ident: Any, ts: float, user: tuple[int, str, str], project: tuple[int, str, bool],
          target: tuple[int, str, str] | None = None, message: Any = None) -> dict[str, Any]:
    """One event in GitLab's streaming shape."""
    author_id, author_name, ip = user
    target_id, target_type, target_details = target or (project[0], "Project", project[1].rsplit("/", 1)[-1])
    details = {"author_name": author_name, "target_id": target_id, "target_type": target_type,
               "target_details": target_details, "custom_message": message, "ip_address": ip,
               "entity_path": project[1]}
    return {"id": ident, "author_id": author_id, "entity_id": project[0], "entity_type": "Project",
            "details": details, "ip_address": ip, "author_name": author_name, "entity_path": project[1],
            "target_details": target_details, "created_at": _iso(ts), "target_type": target_type,
            "target_id": target_id, "event_type": kind}


class Stream:
    """Iterates events; `next_id` numbers database-saved events, UUIDs mark streaming-only ones."""

    def __init__(self, seed: int, start: float) -> None:
        self.rng = random.Random(seed)
        self.world = World(self.rng)
        self.ts, self.next_id = start, 1
        self.queue: list[dict[str, Any]] = []
        self.recent: list[dict[str, Any]] = []

    def db_id(self) -> int:
        self.next_id += 1
        return self.next_id

    def uid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128)))

    def step(self) -> list[dict[str, Any]]:
        rng, w = self.rng, self.world
        self.ts += rng.expovariate(50.0)
        kind = rng.choices([k for k, _ in KINDS], [wt for _, wt in KINDS])[0]
        user, project = rng.choice(w.users), w.project()
        return getattr(self, f"_{kind}")(user, project)

    def _clone(self, user: Any, project: Any) -> list[dict[str, Any]]:
        action = {"protocol": self.rng.choice(("ssh", "http")), "action": "git-upload-pack"}
        return [event("repository_git_operation", self.uid(), self.ts, user, project, message=action)]

    def _push(self, user: Any, project: Any) -> list[dict[str, Any]]:
        action = {"protocol": "ssh", "action": "git-receive-pack"}
        return [event("repository_git_operation", self.uid(), self.ts, user, project, message=action)]

    def _archive(self, user: Any, project: Any) -> list[dict[str, Any]]:
        public = project[2]
        kind = "public_repository_download_operation" if public else "repository_download_operation"
        return [event(kind, self.uid() if public else self.db_id(), self.ts, user, project,
                      message="Repository Download Started")]

    def _anonymous(self, user: Any, project: Any) -> list[dict[str, Any]]:
        public = self.rng.choice([p for p in self.world.projects[:200] if p[2]] or [project])
        anon = (-1, "An unauthenticated user", f"198.51.100.{self.rng.randrange(250)}")
        return [event("public_repository_download_operation", self.uid(), self.ts, anon, public,
                      message="Repository Download Started")]

    def _job(self, user: Any, project: Any) -> list[dict[str, Any]]:
        runner = (user[0], user[1], f"10.0.{self.rng.randrange(4)}.{self.rng.randrange(250)}")
        job_id = self.rng.randrange(10**6, 10**7)
        out = [event("user_authenticated_using_job_token", self.uid(), self.ts, runner, project,
                     target=(job_id, "Ci::Build", str(job_id)),
                     message=f"{user[1]} authenticated using job token of job id: {job_id}")]
        for dep in self.world.deps[project[0]][:1]:
            accessed = self.world.projects[dep]
            out.append(event("job_artifact_downloaded", self.db_id(), self.ts + self.rng.uniform(0.2, 2.5),
                             runner, accessed, message="Downloaded artifact"))
        return out

    def _project(self, user: Any, project: Any) -> list[dict[str, Any]]:
        kind = self.rng.choice(OTHER_PROJECT_TYPES)
        return [event(kind, self.db_id(), self.ts, user, project, message=kind.replace("_", " "))]

    def _user(self, user: Any, project: Any) -> list[dict[str, Any]]:
        e = event("user_signed_in", self.db_id(), self.ts, user, project, message="Signed in")
        e.update(entity_type="User", entity_id=user[0], entity_path=user[1])
        return [e]

    def _allowlist(self, user: Any, project: Any) -> list[dict[str, Any]]:
        dep = self.world.projects[self.rng.randrange(len(self.world.projects))]
        verb = self.rng.choice(("added to", "removed from"))
        kind = "secure_ci_job_token_project_" + ("added" if verb == "added to" else "removed")
        message = f"Project {dep[1]} was {verb} inbound list of allowed projects for {project[1]}"
        return [event(kind, self.db_id(), self.ts, user, project,
                      target=(dep[0], "Project", dep[1].rsplit("/", 1)[-1]), message=message)]

    def _scrape(self, user: Any, project: Any) -> list[dict[str, Any]]:
        start = self.ts
        out = []
        for i, target in enumerate(self.rng.sample(self.world.projects, 30)):
            action = {"protocol": "http", "action": "git-upload-pack"}
            out.append(event("repository_git_operation", self.uid(), start + 4 * i, user, target, message=action))
        return out

    def __iter__(self) -> Iterator[dict[str, Any]]:
        while True:
            for e in self.step():
                self.recent.append(e)
                yield e
                if self.rng.random() < 0.015 and self.recent:
                    yield dict(self.rng.choice(self.recent[-500:]))  # repeated delivery
            del self.recent[:-1000]


def generate(n: int, seed: int = 6, start: float = 1_717_200_000.0) -> Iterator[dict[str, Any]]:
    """The first `n` events of the stream for `seed`."""
    for count, e in enumerate(Stream(seed, start)):
        if count >= n:
            return
        yield e
