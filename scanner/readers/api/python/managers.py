"""python-gitlab objects, managers and methods, mapped to the REST endpoints they call.

`gl.runners.get(5)` is `GET /runners/5`; `project.integrations.get("slack")` is
`GET /projects/:id/integrations/slack` and its `.save()` `PUT` on the same path (or the method
its manager saves with: `project.approvals.get().save()` is a `POST`);
`project.mergerequests.list()` is `GET /projects/:id/merge_requests`; `mr.merge()` is
`PUT /projects/:id/merge_requests/:id/merge`; `runner.active = False; runner.save()` sends `active`;
`mr.merged_by` reads a field of the response that produced `mr`. The paths, the managers each object
has and the requests each method sends are python-gitlab's own (`pygitlab`, generated from its
sources): `project.services` is the same manager as `project.integrations` there.
"""

from __future__ import annotations

from scanner.readers.api.python import pygitlab
from scanner.readers.api.python.values import Mgr, Obj

# Type annotations that say what a parameter holds (`def f(project: Project)`): python-gitlab's classes.
ANNOTATIONS = frozenset({"Gitlab", *(kind for _, kind, _ in pygitlab.MANAGERS.values())})
# In a file that imports python-gitlab, what these names hold when nothing else says (`def register(gl)`).
NAMED = {"gl": "Gitlab", "project": "Project", "group": "Group"}
# `gl.http_get("/runners")`: raw calls relative to /api/v4, and the HTTP method each one uses.
RAW_CALLS = {"http_get": "GET", "http_list": "GET", "http_post": "POST", "http_put": "PUT", "http_delete": "DELETE",
             "http_patch": "PATCH"}
# Keyword arguments of `list()`/`get()` that configure python-gitlab, not the request.
CLIENT_KWARGS = frozenset({"lazy", "get_all", "all", "iterator", "per_page", "page", "as_list", "max_retries",
                           "obey_rate_limit", "retry_transient_errors", "sudo", "pagination", "order_by", "sort"})
# Keyword arguments that make python-gitlab page through a list with offset pagination.
OFFSET_PAGING = frozenset({"get_all", "all", "iterator"})
# The path of an object of each class, from the first manager of that class (`Project`: /projects/:id).
ITEMS: dict[str, str] = {}
for (_, _attr), (_base, _kind, _singleton) in sorted(pygitlab.MANAGERS.items(), key=lambda e: e[0][0] != "Gitlab"):
    ITEMS.setdefault(_kind, _base if _singleton else _base + "/:id")


def named(kind: str) -> Obj:
    """An object of class `kind` of which nothing else is known (a parameter, an attribute)."""
    return Obj(kind, ITEMS.get(kind, ""))


def manager(kind: str, attr: str) -> Mgr | None:
    """The manager `attr` of an object of class `kind` (`gl.runners`, `project.integrations`)."""
    found = pygitlab.MANAGERS.get((kind, attr))
    return Mgr(found[1], found[0], found[2]) if found else None


def item_path(mgr: Mgr, key: object) -> str:
    """The path of one of the manager's objects: its id where the call writes it (`get("slack")`)."""
    if mgr.singleton:
        return mgr.base
    written = str(key) if isinstance(key, (str, int)) and not isinstance(key, bool) and "/" not in str(key) else ":id"
    return f"{mgr.base}/{written or ':id'}"


def manager_action(mgr: Mgr, name: str) -> tuple[str, str] | None:
    """(HTTP method, path) of a manager's own method (`gl.runners.all()`, `gl.runners.verify(…)`)."""
    found = pygitlab.MANAGER_ACTIONS.get((mgr.kind, name))
    if found is None:
        return None
    verb, path = found
    return verb, path.replace("{item}", item_path(mgr, None)).replace("{base}", mgr.base)


def save_method(kind: str) -> str:
    """The HTTP method an object's `save()` sends: PUT, or its manager's own (`project.approvals.get()`
    is saved with POST, `project.pages` with PATCH)."""
    return pygitlab.SAVE_METHODS.get(kind, "PUT")


def object_action(obj: Obj, name: str) -> tuple[str, str] | None:
    """(HTTP method, path) of an object's method (`mr.merge()`, `mr.changes()`, `job.retry()`)."""
    if name == "save":
        return save_method(obj.kind), obj.item
    if name == "delete":
        return "DELETE", obj.item
    found = pygitlab.OBJECT_ACTIONS.get((obj.kind, name))
    if found is None:
        return None
    verb, path = found
    return verb, path.replace("{item}", obj.item).replace("{base}", obj.item.rsplit("/", 1)[0])
