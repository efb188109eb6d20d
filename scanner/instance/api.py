"""The REST calls an instance scan makes, through python-gitlab (imported when an instance scan runs).

Every call used here is listed with GitLab's documentation in docs/instance-scan.md: the group's projects
(`include_subgroups`, `archived`; python-gitlab follows the `Link` header page by page), a project
(`default_branch`, `ci_config_path`), a file's metadata (`HEAD …/repository/files/:path`, whose
`X-Gitlab-Blob-Id` keys the cache), its bytes (`…/raw`), a project's releases (component versions)
and, when a component's files are not found, whether its version names a ref (`…/repository/commits/:ref`).

Rate limits: python-gitlab retries a 429 after `Retry-After` (or until `RateLimit-Reset`); on top of
that, a response saying `RateLimit-Remaining: 0` makes every thread wait for `RateLimit-Reset` before
its next request, so sunset slows down before GitLab has to refuse it.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import gitlab
import requests
from gitlab.exceptions import GitlabError

from scanner.gitlab.retry import retry_after_seconds, unreachable

TIMEOUT = 30.0
PER_PAGE = 100  # GitLab's largest page
MAX_PAUSE = 60.0
MAX_RETRIES = 6  # a RateLimit-Reset further away than this is not waited for in one go


class Unreachable(requests.RequestException):
    """The server could not be reached at all (no name, no listener, no TLS): said once, in one line,
    not retried — python-gitlab retries `requests.ConnectionError`, which this is not."""


class _Adapter(requests.adapters.HTTPAdapter):
    """Until the server has answered once, a connection that cannot be made ends the scan at once and
    says why (`scanner.gitlab.retry.unreachable`); afterwards a refused or timed-out connection is
    retried as a passing fault, and only a name that does not resolve or TLS that fails ends it."""

    reached = False

    def send(self, request: requests.PreparedRequest, *args: Any, **kwargs: Any) -> requests.Response:
        try:
            response = super().send(request, *args, **kwargs)
        except requests.ConnectionError as exc:
            why = unreachable(exc, TIMEOUT)
            if why is not None and (not self.reached or why.startswith(("the host name", "the TLS", "its TLS"))):
                host = urlsplit(str(request.url)).hostname or ""
                port = urlsplit(str(request.url)).port
                raise Unreachable(f"cannot reach {host}{f':{port}' if port else ''}: {why}") from None
            raise
        self.reached = True
        return response


class ApiError(Exception):
    """A request GitLab refused or that failed: the status (0: no answer) and what to tell the user."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class ProjectInfo:
    id: int
    path: str  # full path, `group/sub/name`
    default_branch: str | None  # None: an empty repository
    ci_config_path: str | None
    archived: bool


def _info(attrs: dict[str, Any]) -> ProjectInfo:
    return ProjectInfo(int(attrs["id"]), str(attrs["path_with_namespace"]), attrs.get("default_branch"),
                       attrs.get("ci_config_path") or None, bool(attrs.get("archived")))


class _Gate:
    """Shared by every thread: when GitLab says no requests remain, wait until its window resets."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.until = 0.0

    def hook(self, response: requests.Response, *args: Any, **kwargs: Any) -> None:
        after = response.headers.get("Retry-After")
        if after is not None and not after.strip().isdigit():
            # python-gitlab reads Retry-After as whole seconds only; GitLab may send an HTTP date
            seconds = retry_after_seconds(after)
            response.headers["Retry-After"] = str(math.ceil(min(seconds, MAX_PAUSE)) if seconds is not None else 1)
        remaining, reset = response.headers.get("RateLimit-Remaining"), response.headers.get("RateLimit-Reset")
        if remaining == "0" and reset and reset.isdigit() and response.status_code != 429:
            with self.lock:
                self.until = max(self.until, min(float(reset), time.time() + MAX_PAUSE))

    def wait(self) -> None:
        delay = self.until - time.time()
        if delay > 0:
            time.sleep(delay)


class _Client(gitlab.Gitlab):
    """python-gitlab with fewer retries: its backoff doubles from 0.1 s, so ten retries of a server that
    does not answer take 100 s; six take 6 s. A 429 still waits what `Retry-After` says each time."""

    def http_request(self, verb: str, path: str, *args: Any, **kwargs: Any) -> requests.Response:
        kwargs.setdefault("max_retries", MAX_RETRIES)
        return super().http_request(verb, path, *args, **kwargs)


class Api:
    """One python-gitlab client shared by the scan's threads (requests' pool holds a connection each)."""

    def __init__(self, url: str, token: str | None = None, job_token: str | None = None) -> None:
        self.gate = _Gate()
        session = requests.Session()
        session.hooks["response"].append(self.gate.hook)
        adapter = _Adapter(pool_connections=4, pool_maxsize=64)
        session.mount("http://", adapter)
        session.mount("https://", adapter)
        self.gl = _Client(url.rstrip("/"), private_token=token, job_token=job_token, session=session,
                                timeout=TIMEOUT, retry_transient_errors=True, per_page=PER_PAGE)

    def call(self, what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        self.gate.wait()
        try:
            return fn(*args, **kwargs)
        except GitlabError as exc:
            raise ApiError(exc.response_code or 0, f"{what}: {_reason(exc)}") from None
        except requests.RequestException as exc:
            raise ApiError(0, _failed(what, exc)) from None

    def group_projects(self, group: str, archived: bool) -> Iterator[ProjectInfo]:
        """Every project of the group and its subgroups, page by page as GitLab's `Link` header leads."""
        manager = self.gl.groups.get(group, lazy=True).projects
        extra = {} if archived else {"archived": False}
        listing = self.call(f"group `{group}`", manager.list, iterator=True, include_subgroups=True,
                             with_shared=False, per_page=PER_PAGE, **extra)
        while True:
            try:
                self.gate.wait()
                item = next(listing)
            except StopIteration:
                return
            except GitlabError as exc:
                raise ApiError(exc.response_code or 0, f"group `{group}`: {_reason(exc)}") from None
            except requests.RequestException as exc:
                raise ApiError(0, _failed(f"group `{group}`", exc)) from None
            yield _info(item.attributes)

    def project(self, ident: str | int) -> ProjectInfo:
        found = self.call(f"project `{ident}`", self.gl.projects.get, ident)
        return _info(found.attributes)

    def blob_id(self, project: str, path: str, ref: str) -> str:
        """The blob id of a file at a ref (`HEAD …/repository/files/:path`): the cache's key."""
        files = self.gl.projects.get(project, lazy=True).files
        headers = self.call(f"`{path}` in `{project}`@{ref}", files.head, path, ref=ref)
        return str(headers["X-Gitlab-Blob-Id"])

    def file(self, project: str, path: str, ref: str) -> tuple[str, bytes]:
        """Blob id and bytes in one request (`GET …/repository/files/:path`, base64 `content`)."""
        files = self.gl.projects.get(project, lazy=True).files
        got = self.call(f"`{path}` in `{project}`@{ref}", files.get, path, ref=ref)
        return str(got.attributes["blob_id"]), got.decode()

    def raw(self, project: str, path: str, ref: str) -> bytes:
        files = self.gl.projects.get(project, lazy=True).files
        data: bytes = self.call(f"`{path}` in `{project}`@{ref}", files.raw, path, ref=ref)
        return data

    def tree(self, project: str, ref: str, folder: str) -> list[str]:
        """Paths of the files below `folder` at `ref` (`GET /projects/:id/repository/tree`, recursive)."""
        repo = self.gl.projects.get(project, lazy=True)
        items = self.call(f"files of `{project}`@{ref}", repo.repository_tree, path=folder, ref=ref,
                           recursive=True, get_all=True, per_page=PER_PAGE)
        return [str(i["path"]) for i in items if i.get("type") == "blob"]

    def commit(self, project: str, ref: str) -> str:
        """The commit a tag, branch or SHA names (`GET /projects/:id/repository/commits/:sha`)."""
        commits = self.gl.projects.get(project, lazy=True).commits
        found = self.call(f"ref `{ref}` of `{project}`", commits.get, ref)
        return str(found.attributes.get("id") or "")

    def releases(self, project: str) -> list[str]:
        """Tag names of the project's releases (component versions)."""
        manager = self.gl.projects.get(project, lazy=True).releases
        items = self.call(f"releases of `{project}`", manager.list, get_all=True)
        return [str(r.attributes["tag_name"]) for r in items]


def _failed(what: str, exc: requests.RequestException) -> str:
    """One line: the server could not be reached and why, or what failed and how."""
    if isinstance(exc, Unreachable):
        return str(exc)
    why = unreachable(exc, TIMEOUT)
    return f"{what}: {why or type(exc).__name__}"


def _reason(exc: GitlabError) -> str:
    code = exc.response_code
    said = {401: "401 Unauthorized (check the token)", 403: "403 Forbidden", 404: "404 Not Found (or no access)",
            429: "429 Too Many Requests (retries exhausted)"}
    return said.get(code or 0, f"{code or 'no answer'}: {str(exc.error_message)[:120]}")
