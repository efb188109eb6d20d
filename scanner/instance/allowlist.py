"""The CI/CD job-token allowlist from GitLab's own record (`sunset allowlist --gitlab URL --group PATH`).

For every project of the group: its job-token scope (`GET /projects/:id/job_token_scope`), its inbound
allowlist of projects (`…/job_token_scope/allowlist`) and of groups (`…/groups_allowlist`), and its
job-token authentication log — the projects whose jobs authenticated to it with their `CI_JOB_TOKEN`
in the last 30 days (GraphQL `Project.ciJobTokenAuthLogs`, the log behind the "Authentication log"
of the project's settings). Every origin → project access that is neither the project itself, nor on
its allowlist, nor below an allowlisted group, is rejected once the allowlist is enforced (GitLab 18.0).

`apply` adds each such origin to the project's allowlist (`POST …/job_token_scope/allowlist` with
`target_project_id`); the dry run is the default and lists exactly what would be added.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from scanner.instance.api import Api, ApiError

AUTH_LOG_QUERY = """query($fullPath: ID!, $after: String) {
  project(fullPath: $fullPath) {
    ciJobTokenAuthLogs(first: 100, after: $after) {
      nodes { lastAuthorizedAt originProject { id fullPath } }
      pageInfo { hasNextPage endCursor }
    }
  }
}"""
MAX_LOG_PAGES = 100


@dataclass(frozen=True, slots=True)
class Gap:
    """An access GitLab records today that enforcement will reject."""

    target: str  # the project reached (whose allowlist lacks the origin)
    target_id: int
    origin: str  # the project whose job token reached it
    origin_id: int
    last_authorized: str
    inbound_enabled: bool  # the target already limits access (then the access is rejected today)


@dataclass(slots=True)
class Outcome:
    gaps: list[Gap]
    problems: list[tuple[str, str]]  # project, what could not be read or written
    added: list[Gap]


def _group_path(entry: dict[str, Any]) -> str:
    """An allowlisted group's full path: `full_path` when GitLab gives it, else read from `web_url`."""
    if entry.get("full_path"):
        return str(entry["full_path"])
    url = str(entry.get("web_url", ""))
    path = url.split("://", 1)[-1].split("/", 1)[-1]
    return path.removeprefix("groups/").strip("/")


def scope(api: Api, project: str) -> tuple[bool, set[str], set[str]]:
    """(inbound limited, allowlisted project paths, allowlisted group paths)."""
    manager = api.gl.projects.get(project, lazy=True).job_token_scope
    got = api.call(f"job token scope of `{project}`", manager.get)
    projects = api.call(f"allowlist of `{project}`", got.allowlist.list, get_all=True)
    groups = api.call(f"groups allowlist of `{project}`", got.groups_allowlist.list, get_all=True)
    return (bool(got.attributes.get("inbound_enabled")),
            {str(p.attributes["path_with_namespace"]) for p in projects},
            {_group_path(g.attributes) for g in groups})


def auth_log(api: Api, project: str) -> list[tuple[str, int, str]]:
    """(origin path, origin id, last authorized) for every entry of the project's authentication log."""
    url = f"{api.gl.url}/api/graphql"
    out: list[tuple[str, int, str]] = []
    after: str | None = None
    for _ in range(MAX_LOG_PAGES):
        data = api.call(f"authentication log of `{project}`", api.gl.http_post, url,
                         post_data={"query": AUTH_LOG_QUERY, "variables": {"fullPath": project, "after": after}})
        if not isinstance(data, dict) or data.get("errors"):
            raise ApiError(0, f"authentication log of `{project}`: {str((data or {}).get('errors'))[:200]}")
        found = ((data.get("data") or {}).get("project") or {}).get("ciJobTokenAuthLogs")
        if found is None:
            raise ApiError(404, f"authentication log of `{project}`: not readable (Maintainer role needed)")
        for node in found["nodes"]:
            origin = node["originProject"]
            out.append((str(origin["fullPath"]), int(str(origin["id"]).rsplit("/", 1)[-1]),
                        str(node["lastAuthorizedAt"])))
        if not found["pageInfo"]["hasNextPage"]:
            return out
        after = found["pageInfo"]["endCursor"]
    return out


def gaps_of(api: Api, project: str, project_id: int) -> list[Gap]:
    inbound, projects, groups = scope(api, project)
    gaps = []
    for origin, origin_id, when in auth_log(api, project):
        if origin == project or origin in projects or any(origin.startswith(g + "/") for g in groups):
            continue
        gaps.append(Gap(project, project_id, origin, origin_id, when, inbound))
    return gaps


def run(api: Api, group: str, archived: bool = False, apply: bool = False) -> Outcome:
    outcome = Outcome([], [], [])
    for info in api.group_projects(group, archived):
        try:
            found = gaps_of(api, info.path, info.id)
        except ApiError as exc:
            outcome.problems.append((info.path, str(exc)))
            continue
        outcome.gaps += found
        if not apply:
            continue
        path = f"/projects/{quote(info.path, safe='')}/job_token_scope/allowlist"
        for gap in found:
            try:
                api.call(f"adding `{gap.origin}` to the allowlist of `{gap.target}`", api.gl.http_post, path,
                          post_data={"target_project_id": gap.origin_id})
            except ApiError as exc:
                outcome.problems.append((gap.target, str(exc)))
                continue
            outcome.added.append(gap)
    outcome.gaps.sort(key=lambda g: (g.target, g.origin))
    return outcome
