"""python-gitlab objects and managers, mapped to the REST endpoints they call.

`gl.runners.get(5)` is `GET /runners/:id`; `project.mergerequests.list()` is
`GET /projects/:id/merge_requests`; `runner.active = False; runner.save()` sends `active` with
`PUT /runners/:id`; `mr.merged_by` reads a field of the response that produced `mr`.
Manager names are python-gitlab's (`gitlab/client.py`, `gitlab/v4/objects/`).
"""

from __future__ import annotations

# (kind of the parent object, manager attribute) → (path below the parent's item path, object kind)
MANAGERS: dict[tuple[str, str], tuple[str, str]] = {
    ("gitlab", "projects"): ("/projects", "project"),
    ("gitlab", "groups"): ("/groups", "group"),
    ("gitlab", "runners"): ("/runners", "runner"),
    ("gitlab", "runners_all"): ("/runners/all", "runner"),
    ("gitlab", "mergerequests"): ("/merge_requests", "mergerequest"),
    ("gitlab", "geonodes"): ("/geo_nodes", "geonode"),
    ("gitlab", "users"): ("/users", "user"),
    ("gitlab", "settings"): ("/application/settings", "settings"),
    ("gitlab", "member_roles"): ("/member_roles", "memberrole"),
    ("gitlab", "ci_lint"): ("/ci/lint", "cilint"),
    ("project", "runners"): ("/runners", "runner"),
    ("group", "runners"): ("/runners", "runner"),
    ("project", "mergerequests"): ("/merge_requests", "mergerequest"),
    ("group", "mergerequests"): ("/merge_requests", "mergerequest"),
    ("project", "approvals"): ("/approvals", "approvals"),
    ("project", "feature_flags"): ("/feature_flags", "featureflag"),
    ("project", "ci_lint"): ("/ci/lint", "cilint"),
    ("project", "repositories"): ("/registry/repositories", "repository"),
    ("repository", "tags"): ("/tags", "tag"),
    ("project", "issues"): ("/issues", "issue"),
    ("issue", "notes"): ("/notes", "note"),
    ("mergerequest", "notes"): ("/notes", "note"),
    ("group", "member_roles"): ("/member_roles", "memberrole"),
    ("gitlab", "audit_events"): ("/audit_events", "auditevent"),
    ("group", "audit_events"): ("/audit_events", "auditevent"),
    ("project", "audit_events"): ("/audit_events", "auditevent"),
    ("project", "packages"): ("/packages", "package"),
    ("group", "packages"): ("/packages", "package"),
}
# Managers whose `get()` takes no id: the object is the endpoint itself.
SINGLETONS = frozenset({"settings", "approvals", "cilint"})
# Object methods that call an endpoint of their own: (kind, method) → (HTTP method, path below the item).
ACTIONS: dict[tuple[str, str], tuple[str, str]] = {
    ("mergerequest", "changes"): ("GET", "/changes"),
}
# Type annotations that say what a parameter holds (`def f(project: Project)`).
ANNOTATIONS: dict[str, str] = {
    "Gitlab": "gitlab", "Project": "project", "Group": "group", "Runner": "runner",
    "ProjectMergeRequest": "mergerequest", "MergeRequest": "mergerequest", "ProjectRunner": "runner",
}
# `gl.http_get("/runners")`: raw calls relative to /api/v4, and the HTTP method each one uses.
RAW_CALLS = {"http_get": "GET", "http_list": "GET", "http_post": "POST", "http_put": "PUT", "http_delete": "DELETE"}
# Keyword arguments of `list()`/`get()` that configure python-gitlab, not the request.
CLIENT_KWARGS = frozenset({"lazy", "get_all", "all", "iterator", "per_page", "page", "as_list", "max_retries",
                           "obey_rate_limit", "retry_transient_errors", "sudo", "pagination", "order_by", "sort"})
# Keyword arguments that make python-gitlab page through a list with offset pagination.
OFFSET_PAGING = frozenset({"get_all", "all", "iterator"})


def item_path(base: str, kind: str) -> str:
    return base if kind in SINGLETONS else base + "/:id"
