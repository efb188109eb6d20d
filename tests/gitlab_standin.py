"""A GitLab stand-in for tests and the bench: an HTTP server on 127.0.0.1 speaking the part of GitLab's
REST API v4 that `sunset scan --gitlab` uses, and nothing else (docs/instance-scan.md cites GitLab's
documentation for each route, parameter and header).

* `GET /api/v4/groups/:id/projects` — `include_subgroups`, `archived`, `with_shared`, `page`, `per_page`;
  offset pagination headers (`x-next-page`, `x-page`, `x-per-page`, `x-total`, `x-total-pages`) and `Link`.
* `GET /api/v4/projects/:id` — `id`, `path_with_namespace`, `default_branch`, `ci_config_path`, `archived`.
* `HEAD|GET /api/v4/projects/:id/repository/files/:file_path?ref=` — metadata headers (`X-Gitlab-Blob-Id`, …)
  and the JSON body with base64 `content`; `GET …/raw?ref=` the bytes. `ref=HEAD` is the default branch.
* `GET /api/v4/projects/:id/releases` — `tag_name`, newest first.
* `GET /api/v4/projects/:id/repository/commits/:sha` — the commit a tag, branch or SHA names (`id`, a
  stand-in SHA); `404 Commit Not Found` for a ref the project does not have. The project's refs are the
  keys of its `files`: a tag and a branch are alike here.
* `GET /api/v4/version` — `version` (`16.11.3-ee`) and `revision`; GitLab answers it to an
  authenticated request only, so without a token it is a `401` here too.
* `401` for a wrong token, `404` for what the token cannot see (a private project), `403` where a project
  forbids reading its repository, `429` with `Retry-After` and `RateLimit-*` when told to limit.

`:id` is a number or a URL-encoded full path, as GitLab takes it. Every request is logged (method, path)
so tests can count what sunset asked for.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

TOKEN = "glpat-standin-token"


def blob_id(data: bytes) -> str:
    """Git's blob id: sha1 over `blob <size>\\0` and the bytes."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class Project:
    id: int
    path: str  # full path, `group/sub/name`
    files: dict[str, dict[str, str]]  # ref -> path -> text
    default_branch: str = "main"
    ci_config_path: str | None = None
    archived: bool = False
    private: bool = False  # the token cannot see it: 404 everywhere
    forbidden: bool = False  # the token sees it but may not read its repository: 403 on files
    releases: list[str] = field(default_factory=list)  # tag names, oldest first
    inbound_enabled: bool = False  # "Limit access to this project" (job token scope)
    allowlist: list[str] = field(default_factory=list)  # project paths allowed in with their job tokens
    groups_allowlist: list[str] = field(default_factory=list)  # group paths
    auth_log: list[tuple[str, str]] = field(default_factory=list)  # (origin project path, last authorized date)

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "path_with_namespace": self.path, "path": self.path.rsplit("/", 1)[-1],
                "name": self.path.rsplit("/", 1)[-1], "default_branch": self.default_branch,
                "ci_config_path": self.ci_config_path, "archived": self.archived,
                "web_url": f"http://gitlab.example/{self.path}",
                "namespace": {"full_path": self.path.rsplit("/", 1)[0]}}


@dataclass
class Instance:
    projects: list[Project] = field(default_factory=list)
    groups: set[str] = field(default_factory=set)
    latency: float = 0.0  # seconds added to every request (the bench's 20 ms)
    limit_every: int = 0  # every Nth request answers 429 (0: never)
    retry_after: str = "1"
    max_per_page: int = 100  # GitLab's cap; lower it to make a test walk several pages
    remote: dict[str, str] = field(default_factory=dict)  # `/remote/<name>`: files for `include: remote:`
    version: str = "16.11.3-ee"  # what `GET /api/v4/version` answers
    log: list[tuple[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def group_id(self, path: str) -> int:
        return 1000 + sorted(self.groups).index(path)

    def add(self, path: str, files: dict[str, str] | None = None, **kw: Any) -> Project:
        refs = kw.pop("refs", None) or {kw.get("default_branch", "main"): files or {}}
        project = Project(len(self.projects) + 1, path, refs, **kw)
        self.projects.append(project)
        parts = path.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            self.groups.add("/".join(parts[:i]))
        return project

    def project(self, ident: str) -> Project | None:
        for p in self.projects:
            if ident == str(p.id) or ident == p.path:
                return p
        return None

    def count(self, method: str, prefix: str) -> int:
        with self.lock:
            return sum(1 for m, p in self.log if m == method and p.startswith(prefix))


def _true(value: str | None) -> bool:
    """A boolean parameter as GitLab's API (Grape) reads it: python-gitlab sends `True`, curl users `true`."""
    return (value or "").lower() in ("true", "1", "yes", "t")


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    # Headers and body are separate writes: with Nagle's algorithm on, the body waits for the
    # client's delayed ACK of the headers, up to 40 ms a request on a kept-alive connection.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_GET(self) -> None:  # noqa: N802 (http.server's names)
        self._route("GET")

    def do_HEAD(self) -> None:  # noqa: N802
        self._route("HEAD")

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        self.body = json.loads(self.rfile.read(length) or b"{}")
        self._route("POST")

    def _send(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None,
              ctype: str = "application/json") -> None:
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(data).encode(), headers)

    def _route(self, method: str) -> None:
        inst = self.server.instance
        url = urlsplit(self.path)
        raw_parts = url.path.split("/")
        parts = [unquote(p) for p in raw_parts]
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        with inst.lock:
            inst.log.append((method, unquote(url.path)))
            n = len(inst.log)
        if inst.latency:
            time.sleep(inst.latency)
        reset = str(int(time.time()) + 60)
        if inst.limit_every and n % inst.limit_every == 0:
            self._json(429, {"message": "429 Too Many Requests"},
                       {"Retry-After": inst.retry_after, "RateLimit-Limit": "600", "RateLimit-Observed": "601",
                        "RateLimit-Remaining": "0", "RateLimit-Reset": reset})
            return
        token = self.headers.get("PRIVATE-TOKEN") or self.headers.get("JOB-TOKEN")
        if token is not None and token != TOKEN:
            self._json(401, {"message": "401 Unauthorized"})
            return
        if parts[1] == "remote" and not token:  # a web server outside GitLab, for `include: remote:`
            text = inst.remote.get("/".join(parts[2:]))
            self._send(200 if text is not None else 404, (text or "").encode(), ctype="text/plain")
            return
        if parts[1:] == ["api", "graphql"] and method == "POST":
            self._graphql()
            return
        if parts[1:] == ["api", "v4", "version"] and method == "GET":
            if token is None:
                self._json(401, {"message": "401 Unauthorized"})
            else:
                self._json(200, {"version": inst.version, "revision": "6d1a3a9b1b5"})
            return
        if parts[:3] != ["", "api", "v4"] or len(parts) < 5:
            self._json(404, {"error": "404 Not Found"})
            return
        if parts[3] == "groups" and len(parts) == 6 and parts[5] == "projects":
            self._group_projects(parts[4], query, url.path)
        elif parts[3] == "projects":
            self._project_route(parts[4], parts[5:], query)
        else:
            self._json(404, {"error": "404 Not Found"})

    def _group_projects(self, group: str, query: dict[str, str], path: str) -> None:
        inst = self.server.instance
        if group not in inst.groups:
            self._json(404, {"message": "404 Group Not Found"})
            return
        subgroups = _true(query.get("include_subgroups"))
        chosen = [p for p in inst.projects if not p.private and (
            p.path.rsplit("/", 1)[0] == group or (subgroups and p.path.startswith(group + "/")))]
        if "archived" in query:
            chosen = [p for p in chosen if p.archived == _true(query["archived"])]
        page, per_page = int(query.get("page", "1")), min(int(query.get("per_page", "20")), inst.max_per_page)
        pages = max(1, -(-len(chosen) // per_page))
        items = chosen[(page - 1) * per_page: page * per_page]
        base = f"http://{self.headers['Host']}{path}"
        rest = "&".join(f"{k}={v}" for k, v in query.items() if k not in ("page", "per_page"))

        def link(p: int, rel: str) -> str:
            return f'<{base}?{rest}&page={p}&per_page={per_page}>; rel="{rel}"'

        links = [link(page + 1, "next")] if page < pages else []
        links += [link(1, "first"), link(pages, "last")]
        headers = {"x-page": str(page), "x-per-page": str(per_page), "x-total": str(len(chosen)),
                   "x-total-pages": str(pages), "x-next-page": str(page + 1) if page < pages else "",
                   "x-prev-page": str(page - 1) if page > 1 else "", "Link": ", ".join(links)}
        self._json(200, [p.as_json() for p in items], headers)

    def _project_route(self, ident: str, rest: list[str], query: dict[str, str]) -> None:
        project = self.server.instance.project(ident)
        if project is None or project.private:
            self._json(404, {"message": "404 Project Not Found"})
            return
        if not rest:
            self._json(200, project.as_json())
        elif rest[:1] == ["job_token_scope"]:
            self._job_token_scope(project, rest[1:], query)
        elif rest == ["repository", "tree"]:
            self._tree(project, query)
        elif rest[:2] == ["repository", "commits"] and len(rest) == 3:
            if project.forbidden:
                self._json(403, {"message": "403 Forbidden"})
            elif rest[2] in project.files:
                sha = hashlib.sha1(f"{project.path}@{rest[2]}".encode()).hexdigest()
                self._json(200, {"id": sha, "short_id": sha[:8], "title": f"{rest[2]}"})
            else:
                self._json(404, {"message": "404 Commit Not Found"})
        elif rest == ["releases"]:
            self._json(200, [{"tag_name": t, "name": t} for t in reversed(project.releases)])
        elif rest[:2] == ["repository", "files"] and len(rest) in (3, 4) and rest[3:] in ([], ["raw"]):
            if project.forbidden:
                self._json(403, {"message": "403 Forbidden"})
                return
            self._file(project, rest[2], query.get("ref", "HEAD"), raw=len(rest) == 4)
        else:
            self._json(404, {"error": "404 Not Found"})

    def _tree(self, project: Project, query: dict[str, str]) -> None:
        """`doc/api/repositories.md` (List repository tree): `path`, `ref`, `recursive`, paged."""
        ref = query.get("ref") or project.default_branch
        folder = query.get("path", "").strip("/")
        files = sorted(project.files.get(ref, {}))
        under = [f for f in files if not folder or f.startswith(folder + "/")]
        if not _true(query.get("recursive")):
            under = [f for f in under if "/" not in f[len(folder) + 1 if folder else 0:]]
        items = [{"id": blob_id(project.files[ref][f].encode()), "name": f.rsplit("/", 1)[-1], "type": "blob",
                  "path": f, "mode": "100644"} for f in under]
        page, headers = _paged(items, query)
        self._json(200, page, headers)

    def _job_token_scope(self, project: Project, rest: list[str], query: dict[str, str]) -> None:
        """`doc/api/project_job_token_scopes.md`: the scope, the project and group allowlists, adding to them."""
        inst = self.server.instance
        if project.forbidden:  # the Maintainer role is needed
            self._json(403, {"message": "403 Forbidden"})
        elif not rest and self.command == "GET":
            self._json(200, {"inbound_enabled": project.inbound_enabled, "outbound_enabled": False})
        elif rest == ["allowlist"] and self.command == "GET":
            found = [p.as_json() for path in project.allowlist if (p := inst.project(path))]
            items, headers = _paged(found, query)
            self._json(200, items, headers)
        elif rest == ["groups_allowlist"] and self.command == "GET":
            found = [{"id": inst.group_id(g), "name": g.rsplit("/", 1)[-1],
                      "web_url": f"http://gitlab.example/groups/{g}"} for g in project.groups_allowlist]
            items, headers = _paged(found, query)
            self._json(200, items, headers)
        elif rest == ["allowlist"] and self.command == "POST":
            target = next((p for p in inst.projects if p.id == int(self.body["target_project_id"])), None)
            if target is None:
                self._json(404, {"message": "404 Project Not Found"})
                return
            with inst.lock:
                project.allowlist.append(target.path)
            self._json(201, {"source_project_id": project.id, "target_project_id": target.id})
        else:
            self._json(404, {"error": "404 Not Found"})

    def _graphql(self) -> None:
        """Only `project(fullPath:) { ciJobTokenAuthLogs(first:, after:) { nodes { lastAuthorizedAt
        originProject { id fullPath } } pageInfo { hasNextPage endCursor } } }`, paged by a numeric cursor."""
        inst = self.server.instance
        query, variables = str(self.body.get("query", "")), self.body.get("variables") or {}
        project = inst.project(str(variables.get("fullPath")))
        if "ciJobTokenAuthLogs" not in query or project is None or project.private:
            self._json(200, {"data": {"project": None}})
            return
        start, first = int(variables.get("after") or 0), int(variables.get("first") or 100)
        log = project.auth_log[start: start + first]
        nodes = [{"lastAuthorizedAt": when, "originProject": {"id": f"gid://gitlab/Project/{o.id}", "fullPath": path}}
                 for path, when in log if (o := inst.project(path))]
        more = start + first < len(project.auth_log)
        page = {"hasNextPage": more, "endCursor": str(start + first) if more else None}
        self._json(200, {"data": {"project": {"ciJobTokenAuthLogs": {"nodes": nodes, "pageInfo": page}}}})

    def _file(self, project: Project, path: str, ref: str, raw: bool) -> None:
        ref = project.default_branch if ref == "HEAD" else ref
        text = project.files.get(ref, {}).get(path)
        if text is None:
            self._json(404, {"message": "404 File Not Found"})
            return
        data = text.encode()
        meta = {"X-Gitlab-Blob-Id": blob_id(data), "X-Gitlab-File-Path": path, "X-Gitlab-Ref": ref,
                "X-Gitlab-Size": str(len(data)), "X-Gitlab-Encoding": "base64",
                "X-Gitlab-File-Name": path.rsplit("/", 1)[-1],
                "X-Gitlab-Content-Sha256": hashlib.sha256(data).hexdigest()}
        if raw:
            self._send(200, data, meta, ctype="text/plain")
            return
        self._json(200, {"file_name": meta["X-Gitlab-File-Name"], "file_path": path, "size": len(data),
                         "encoding": "base64", "content": base64.b64encode(data).decode(), "ref": ref,
                         "blob_id": meta["X-Gitlab-Blob-Id"], "content_sha256": meta["X-Gitlab-Content-Sha256"]},
                   meta)


def _paged(items: list[Any], query: dict[str, str]) -> tuple[list[Any], dict[str, str]]:
    page, per_page = int(query.get("page", "1")), min(int(query.get("per_page", "20")), 100)
    pages = max(1, -(-len(items) // per_page))
    headers = {"x-page": str(page), "x-per-page": str(per_page), "x-total": str(len(items)),
               "x-total-pages": str(pages), "x-next-page": str(page + 1) if page < pages else ""}
    return items[(page - 1) * per_page: page * per_page], headers


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    instance: Instance


class StandIn:
    """`with StandIn(instance) as url:` — the server runs on a free port of 127.0.0.1 for the block."""

    def __init__(self, instance: Instance) -> None:
        self.instance = instance
        self.server = _Server(("127.0.0.1", 0), _Handler)
        self.server.instance = instance
        # shutdown() waits for the serving loop to look again: every 0.5 s by default
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.01},
                                       daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> str:
        self.thread.start()
        return self.url

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
