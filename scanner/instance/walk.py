"""One project's pipeline through GitLab's API: its CI/CD configuration file and every include, resolved
as GitLab resolves them (runs in a worker thread; nothing here touches the report).

* `local` — the same project and ref (wildcards through the repository tree); `project` + `file`
  (+ `ref`, else that project's default branch);
  `component` — `host/group/project/name@version` on this instance (`$CI_SERVER_FQDN` and
  `$CI_SERVER_HOST` are this instance's host), the version and file as GitLab's `InstancePath` takes
  them (`scanner.instance.components`: catalog version, released tag, then any ref of that name);
  `remote` only with `--fetch-remote`;
  `template` is matched by name where it is written, resolved as GitLab resolves it
  (`scanner.rules.ci_templates`; GitLab's own templates are not fetched).
* GitLab's limits (nesting 100, 150 includes per pipeline); cycles, 403 and 404 are errors on the
  including line, and the rest of the pipeline is still read. A file reached twice in one project's
  pipeline is read once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scanner.core.document import Document
from scanner.core.files import printable
from scanner.core.results import IncludeRecord
from scanner.engine.globs import Glob
from scanner.engine.localinclude import MAX_INCLUDE_DEPTH, MAX_INCLUDES
from scanner.instance import components
from scanner.instance.api import Api, ApiError, ProjectInfo
from scanner.instance.store import Fetched, FileKey, Store
from scanner.readers import ci
from scanner.rules import ci_templates

DEFAULT_CONFIG = ".gitlab-ci.yml"


@dataclass(frozen=True, slots=True)
class Use:
    """A file a project's pipeline reaches, and the files that lead to it from the project's root."""

    key: FileKey
    chain: tuple[str, ...]  # shown names, root first; () for the root itself
    how: str  # root | local | project | component | remote


@dataclass(slots=True)
class ProjectResult:
    project: str
    ref: str
    root: str
    status: str  # scanned | no CI/CD configuration | empty repository | error
    uses: list[Use] = field(default_factory=list)
    files: dict[FileKey, Fetched] = field(default_factory=dict)
    errors: list[tuple[str, int | None, str]] = field(default_factory=list)
    includes: dict[FileKey, list[IncludeRecord]] = field(default_factory=dict)


@dataclass
class Context:
    """What every project's walk shares (thread-safe)."""

    api: Api
    store: Store
    host: str  # the instance's host[:port], as component addresses name it
    ref: str | None = None  # --ref: every project at this ref instead of its default branch
    fetch_remote: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)
    branches: dict[str, str | None | ApiError] = field(default_factory=dict)
    releases: dict[str, list[str] | ApiError] = field(default_factory=dict)
    trees: dict[tuple[str, str, str], list[str] | ApiError] = field(default_factory=dict)
    refs: dict[tuple[str, str], bool | ApiError] = field(default_factory=dict)

    def _memo(self, table: dict[Any, Any], key: Any, fetch: Callable[[], Any]) -> Any:
        """One API answer per key for the whole walk; an API error is remembered and raised again."""
        if key not in table:
            try:
                found = fetch()
            except ApiError as exc:
                found = exc
            with self.lock:
                table[key] = found
        value = table[key]
        if isinstance(value, ApiError):
            raise value
        return value

    def tree(self, project: str, ref: str, folder: str) -> list[str]:
        found: list[str] = self._memo(self.trees, (project, ref, folder),
                                      lambda: self.api.tree(project, ref, folder))
        return found

    def default_branch(self, project: str) -> str | None:
        found: str | None = self._memo(self.branches, project,
                                       lambda: self.api.project(project).default_branch)
        return found

    def version_ref(self, project: str, version: str) -> str:
        """A component version as a ref, in GitLab's order (`scanner.instance.components`)."""
        if not components.needs_catalog(version):
            return version
        tags: list[str] = self._memo(self.releases, project, lambda: self.api.releases(project))
        found = components.catalog_version(tags, version)
        if found is None and version == components.LATEST:
            raise ApiError(404, f"`~latest` needs a catalog version: `{project}` has no release with a "
                                "semantic version; use a tag, branch or commit SHA")
        return found or version  # `1.0` with no catalog version: a released tag or a ref of that name

    def has_ref(self, project: str, ref: str) -> bool:
        """Whether `ref` names a tag, branch or commit of the project (`GET …/repository/commits/:ref`)."""
        try:
            found: bool = self._memo(self.refs, (project, ref), lambda: self.api.commit(project, ref) != "")
        except ApiError as exc:
            if exc.status == 404:
                return False
            raise
        return found


def config_key(info: ProjectInfo, ref: str) -> FileKey | str:
    """The project's CI/CD configuration file: `path`, `path@group/project[:ref]`; a URL is returned as is."""
    value = info.ci_config_path or DEFAULT_CONFIG
    if value.startswith(("http://", "https://")):
        return value
    if "@" in value:
        path, _, other = value.rpartition("@")
        other, _, other_ref = other.partition(":")
        return FileKey(other, other_ref or ref, path.lstrip("/"))
    return FileKey(info.path, ref, value.lstrip("/"))


@dataclass(slots=True)
class _Pipeline:
    includes: int = 0
    over_limit: bool = False
    seen: set[FileKey] = field(default_factory=set)


class Walk:
    def __init__(self, ctx: Context, info: ProjectInfo) -> None:
        self.ctx = ctx
        self.info = info
        ref = ctx.ref or info.default_branch or ""
        self.result = ProjectResult(info.path, ref, "", "scanned")

    def run(self) -> ProjectResult:
        r = self.result
        if not r.ref:
            r.status = "empty repository"
            return r
        root = config_key(self.info, r.ref)
        if isinstance(root, str):
            if not self.ctx.fetch_remote:
                r.status = "CI/CD configuration is a URL; not fetched (--fetch-remote)"
                return r
            root = FileKey("remote", "", root)
        r.root = root.shown
        try:
            fetched = self.ctx.store.get(root)
        except ApiError as exc:
            if exc.status == 404 and root.project == self.info.path:
                r.status = "no CI/CD configuration"
            else:
                r.status = "error"
                r.errors.append((self.info.path, None, f"CI/CD configuration {root.shown}: {exc}"))
            return r
        self.visit(fetched, (), (), _Pipeline(), "root")
        return r

    def error(self, where: str, line: int | None, message: str) -> None:
        self.result.errors.append((where, line, printable(message)))

    def visit(self, f: Fetched, chain: tuple[str, ...], stack: tuple[FileKey, ...], pipe: _Pipeline,
              how: str) -> None:
        r = self.result
        r.uses.append(Use(f.key, chain, how))
        if f.key in pipe.seen:
            return
        pipe.seen.add(f.key)
        r.files[f.key] = f
        if f.data is None:
            return
        doc = Document(f.key.shown, Path(f.key.shown), "gitlab-ci", f.text, f.data)
        records = r.includes.setdefault(f.key, [])
        for entry in ci.include_entries(doc):
            line = doc.span(entry.route, "value")[0]
            if entry.kind == "invalid":
                self.error(f.key.shown, line, entry.problem)
                continue
            keys, note = self.resolve(f.key, entry, line)
            shown = printable(entry.target)
            notes = "; ".join(n for n in ("child pipeline (trigger:include)" if entry.child else "", note) if n)
            records.append(IncludeRecord(f.key.shown, line, entry.kind, shown, bool(keys), notes))
            for key in keys:
                self.follow(f, key, entry, line, chain + (f.key.shown,), stack + (f.key,), pipe)

    def follow(self, f: Fetched, key: FileKey, entry: ci.IncludeEntry, line: int, chain: tuple[str, ...],
               stack: tuple[FileKey, ...], pipe: _Pipeline) -> None:
        if entry.child:  # a child pipeline is a root of its own, with its own limits
            chain, stack, pipe = (), (), _Pipeline()
        if key in stack:
            names = " → ".join(k.shown for k in stack[stack.index(key):] + (key,))
            self.error(f.key.shown, line, f"include cycle: {names}")
            return
        if len(stack) > MAX_INCLUDE_DEPTH:
            self.error(f.key.shown, line, f"includes nested deeper than GitLab's limit of {MAX_INCLUDE_DEPTH}")
            return
        pipe.includes += 1
        if pipe.includes > MAX_INCLUDES and not pipe.over_limit:
            pipe.over_limit = True
            self.error(f.key.shown, line, f"more than {MAX_INCLUDES} includes in one pipeline; GitLab rejects it")
        try:
            got = self.ctx.store.get(key)
        except ApiError as exc:
            self.error(f.key.shown, line, f"include: {exc}")
            return
        self.visit(got, chain, stack, pipe, entry.kind)

    def resolve(self, at: FileKey, entry: ci.IncludeEntry, line: int) -> tuple[list[FileKey], str]:
        """The file an include names (none when it is only recorded), and a note for the report."""
        target, kind = entry.target, entry.kind
        if kind == "component":
            return self.component(at, target, line)
        if "$" in target:
            return [], "path uses CI/CD variables; not resolved"
        if kind == "local":
            if at.project == "remote":
                return [], "local include in a remote file; not resolved"
            if "*" in target:
                return self.wildcard(at, target, line), ""
            return [FileKey(at.project, at.ref, target.lstrip("/"))], ""
        if kind == "project":
            project, _, path = target.partition(":")
            try:
                ref = entry.ref or self.ctx.default_branch(project)
            except ApiError as exc:
                self.error(at.shown, line, f"include: {exc}")
                return [], ""
            if not ref:
                self.error(at.shown, line, f"include project `{project}`: empty repository")
                return [], ""
            return [FileKey(project, ref, path.lstrip("/"))], ""
        if kind == "remote":
            if self.ctx.fetch_remote:
                return [FileKey("remote", "", target)], ""
            return [], "not fetched (--fetch-remote)"
        if kind == "template":  # GitLab's own templates are not fetched: matched by name where written
            return [], ci_templates.include_note(target)
        return [], ""  # artifact (exists only in a running pipeline)

    def wildcard(self, at: FileKey, target: str, line: int) -> list[FileKey]:
        """`ci/*.yml` (one folder), `ci/**.yml` (across folders): the project's YAML files that match."""
        pattern = target.lstrip("/")
        folder = pattern[: pattern.find("*")].rpartition("/")[0]
        try:
            paths = self.ctx.tree(at.project, at.ref, folder)
        except ApiError as exc:
            self.error(at.shown, line, f"include: {exc}")
            return []
        glob = Glob(pattern)
        found = [FileKey(at.project, at.ref, p) for p in paths if p.endswith((".yml", ".yaml")) and glob.match(p)]
        if not found:
            self.error(at.shown, line, f"local include pattern `{_short(target)}` matches no file")
        return sorted(found)

    def component(self, at: FileKey, target: str, line: int) -> tuple[list[FileKey], str]:
        found = components.parse(target, self.ctx.host)
        if found is None:
            self.error(at.shown, line, f"component `{_short(target)}`: not `host/group/project/name@version`")
            return [], ""
        if found.host != self.ctx.host:
            return [], f"component on another instance ({found.host}); not fetched"
        project, said = found.project, f"component `{_short(target)}`: "
        try:
            ref = self.ctx.version_ref(project, found.version)
            for candidate in found.files():
                key = FileKey(project, ref, candidate)
                try:
                    self.ctx.store.get(key)
                except ApiError as exc:
                    if exc.status == 404:
                        continue
                    raise
                return [key], ""
            missing = "" if self.ctx.has_ref(project, ref) else \
                f"no catalog version, release, tag, branch or commit `{_short(found.version, 40)}` in {project}"
        except ApiError as exc:
            self.error(at.shown, line, f"{said}{exc}")
            return [], ""
        self.error(at.shown, line, said + (missing or "no " + " or ".join(found.files()) + f" in {project}@{ref}"))
        return [], ""


def _short(target: str, most: int = 80) -> str:
    return target if len(target) <= most else target[:most] + "…"
