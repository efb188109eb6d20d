"""`scanner/readers/api/python/pygitlab.py` is python-gitlab's own map of managers and methods to REST
paths, read from the installed python-gitlab (its manager classes' `_path`, the managers each object
declares, and the `path = …` / `self.…gitlab.http_<verb>(path…)` of each of its methods).

The committed table must be what this generator writes for the python-gitlab it was made from;
regenerate it deliberately with `SUNSET_UPDATE_PYGITLAB=1 python -m pytest tests/test_python_gitlab_table.py`.
Under another python-gitlab release, every committed entry must still hold (new ones may appear).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import os
import pkgutil
import re
import typing
from pathlib import Path
from typing import Any

GENERATED = Path(__file__).resolve().parent.parent / "scanner" / "readers" / "api" / "python" / "pygitlab.py"
_VERBS = {"http_get": "GET", "http_list": "GET", "http_post": "POST", "http_put": "PUT", "http_delete": "DELETE",
          "http_patch": "PATCH"}


def _template(path: str) -> str:
    """python-gitlab's `/projects/{project_id}/merge_requests` → `/projects/:id/merge_requests`."""
    return re.sub(r"\{[^}]*\}", ":id", path)


def _path_of(node: ast.expr) -> str | None:
    """The path an action's `path = …` builds: `{item}` for the object's own path, `{base}` for its
    manager's, `:id` for any other value; None when it is built some other way."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return _template(node.value)
    if not isinstance(node, ast.JoinedStr):
        return None
    out: list[str] = []
    for part in node.values:
        if isinstance(part, ast.Constant):
            out.append(str(part.value))
            continue
        assert isinstance(part, ast.FormattedValue)
        text = ast.unparse(part.value)
        out.append({"self.manager.path": "{base}", "self.path": "{base}", "self.encoded_id": ":id",
                    "self._computed_path": "{base}"}.get(text, ":id"))
    path = "".join(out)
    return "{item}" + path[len("{base}/:id"):] if path.startswith("{base}/:id") else path


def _actions() -> dict[str, dict[str, tuple[str, str]]]:
    """Class name → method → (HTTP method, path) for every method of python-gitlab's objects,
    managers and mixins that sends one request to a path it builds."""
    import gitlab.mixins
    import gitlab.v4.objects

    modules = [gitlab.mixins] + [importlib.import_module("gitlab.v4.objects." + m.name)
                                 for m in pkgutil.iter_modules(gitlab.v4.objects.__path__)]
    found: dict[str, dict[str, tuple[str, str]]] = {}
    for module in modules:
        for cls in ast.parse(inspect.getsource(module)).body:
            if not isinstance(cls, ast.ClassDef):
                continue
            for fn in cls.body:
                if not isinstance(fn, ast.FunctionDef) or fn.name.startswith("_"):
                    continue
                path: str | None = None
                verb: str | None = None
                for node in ast.walk(fn):
                    if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "path"
                                                            for t in node.targets):
                        path = _path_of(node.value)
                    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                            and node.func.attr in _VERBS and verb is None:
                        verb = _VERBS[node.func.attr]
                if verb is not None and path is not None:
                    found.setdefault(cls.name, {})[fn.name] = (verb, path)
    return found


def table() -> dict[str, Any]:
    import gitlab
    import gitlab.v4.objects as objects
    from gitlab.base import RESTManager, RESTObject
    from gitlab.mixins import GetWithoutIdMixin

    managers: dict[tuple[str, str], tuple[str, str, bool]] = {}
    client = gitlab.Gitlab("http://localhost")
    for name in sorted(vars(client)):
        m = getattr(client, name)
        if isinstance(m, RESTManager) and m._obj_cls is not None:
            managers[("Gitlab", name)] = (_template(m._path), m._obj_cls.__name__, isinstance(m, GetWithoutIdMixin))
    classes = {name: c for name, c in inspect.getmembers(objects, inspect.isclass)}
    for name, c in sorted(classes.items()):
        if not (issubclass(c, RESTObject) and c is not RESTObject):
            continue
        for attr, hint in sorted(typing.get_type_hints(c).items()):
            if isinstance(hint, type) and issubclass(hint, RESTManager) and hint._obj_cls is not None:
                managers[(name, attr)] = (_template(hint._path), hint._obj_cls.__name__,
                                          issubclass(hint, GetWithoutIdMixin))
    actions = _actions()
    object_actions: dict[tuple[str, str], tuple[str, str]] = {}
    manager_actions: dict[tuple[str, str], tuple[str, str]] = {}
    for name, c in sorted(classes.items()):
        if not (isinstance(c, type) and issubclass(c, (RESTObject, RESTManager))):
            continue
        target = object_actions if issubclass(c, RESTObject) else manager_actions
        key = name if issubclass(c, RESTObject) else (c._obj_cls.__name__ if getattr(c, "_obj_cls", None) else "")
        if not key:
            continue
        for base in reversed(c.__mro__):
            for method, action in actions.get(base.__name__, {}).items():
                target[(key, method)] = action
    return {"version": gitlab.__version__, "managers": managers, "objects": object_actions,
            "managers_actions": manager_actions, "save_methods": _save_methods(classes)}


def _save_methods(classes: dict[str, Any]) -> dict[str, str]:
    """Object class → the HTTP method its `save()` sends, where its manager's `_update_method` is not
    PUT (`ProjectApproval`: POST, python-gitlab's `ProjectApprovalManager`)."""
    from gitlab.base import RESTManager
    from gitlab.mixins import UpdateMethod

    out: dict[str, str] = {}
    for _, c in sorted(classes.items()):
        if not (isinstance(c, type) and issubclass(c, RESTManager)) or getattr(c, "_obj_cls", None) is None:
            continue
        method = getattr(c, "_update_method", UpdateMethod.PUT)
        if method != UpdateMethod.PUT:
            assert out.get(c._obj_cls.__name__, method.name) == method.name, c
            out[c._obj_cls.__name__] = method.name
    return out


def generate() -> str:
    t = table()
    lines = [
        "# ruff: noqa: E501",
        '"""python-gitlab\'s managers and methods, mapped to the REST paths they call (generated from',
        f"python-gitlab {t['version']} by tests/test_python_gitlab_table.py; do not edit by hand).",
        "",
        "`MANAGERS`: (object class, manager attribute) → (the manager's path, the class of its objects,",
        "whether `get()` takes no id). `OBJECT_ACTIONS`: (object class, method) → (HTTP method, path), where",
        "`{item}` is the object's own path. `MANAGER_ACTIONS`: (class of the manager's objects, method) →",
        "(HTTP method, path), where `{base}` is the manager's path and `{item}` one of its objects'.",
        "`SAVE_METHODS`: object class → the HTTP method of its `save()` where that is not PUT.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        f"VERSION = {t['version']!r}",
        "MANAGERS: dict[tuple[str, str], tuple[str, str, bool]] = {",
        *(f"    {k!r}: {v!r}," for k, v in sorted(t["managers"].items())),
        "}",
        "OBJECT_ACTIONS: dict[tuple[str, str], tuple[str, str]] = {",
        *(f"    {k!r}: {v!r}," for k, v in sorted(t["objects"].items())),
        "}",
        "MANAGER_ACTIONS: dict[tuple[str, str], tuple[str, str]] = {",
        *(f"    {k!r}: {v!r}," for k, v in sorted(t["managers_actions"].items())),
        "}",
        "SAVE_METHODS: dict[str, str] = {",
        *(f"    {k!r}: {v!r}," for k, v in sorted(t["save_methods"].items())),
        "}",
        "",
    ]
    return "\n".join(lines)


def test_the_committed_table_is_python_gitlabs() -> None:
    import gitlab

    from scanner.readers.api.python import pygitlab

    if os.environ.get("SUNSET_UPDATE_PYGITLAB"):
        GENERATED.write_text(generate())
    if gitlab.__version__ == pygitlab.VERSION:
        assert GENERATED.read_text() == generate()
        return
    now = table()
    for name, committed in (("managers", pygitlab.MANAGERS), ("objects", pygitlab.OBJECT_ACTIONS),
                            ("managers_actions", pygitlab.MANAGER_ACTIONS), ("save_methods", pygitlab.SAVE_METHODS)):
        changed = {k: (v, now[name].get(k)) for k, v in committed.items() if now[name].get(k) != v}
        assert changed == {}, f"python-gitlab {gitlab.__version__} changed {name}: regenerate the table"
