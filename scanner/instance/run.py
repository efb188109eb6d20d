"""`sunset scan --gitlab URL --group PATH`: every project of a group, through GitLab's API, checked by
the same engine as a checkout (`Scan.check`, one finding per written place).

Projects are walked by a bounded pool of threads (`--concurrency`, default 8); only the main thread
touches the report. A file reached by many projects is checked once: its findings are reported once,
under `group/project@ref:path`, and the report's `projects` say which projects reach it and through
which chain of includes (the blast radius). Results stream to the journal (`--state`) as projects
finish; at most `concurrency × 4` projects are in flight, and a project's own files are dropped from
memory once it is recorded.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from scanner.core.results import FileUse, ProjectRecord, Report
from scanner.engine.scan import Scan, ScanOptions
from scanner.instance import journal
from scanner.instance.api import Api, ProjectInfo
from scanner.instance.store import BlobCache, Store
from scanner.instance.walk import Context, ProjectResult, Walk
from scanner.rules.documents import KINDS
from scanner.rules.policy import Policy


@dataclass(frozen=True, slots=True)
class InstanceOptions:
    url: str
    group: str
    token: str | None = None
    job_token: str | None = None
    ref: str | None = None
    archived: bool = False
    fetch_remote: bool = False
    concurrency: int = 8
    cache_dir: Path | None = None
    state: Path | None = None  # the journal: resumable
    progress: Callable[[int, str], None] | None = None  # projects done, the last one


@dataclass(slots=True)
class Stats:
    projects: int = 0
    resumed: int = 0
    downloads: int = 0
    cache_hits: int = 0


class Collector:
    """Adds finished projects to the report, in the main thread."""

    def __init__(self, scan: Scan, checked: set[str]) -> None:
        self.scan = scan
        self.checked = checked
        self.errors = {(e.path, e.line, e.message) for e in scan.report.errors}

    def add(self, result: ProjectResult) -> tuple[ProjectRecord, list[str]]:
        scan, report = self.scan, self.scan.report
        new: list[str] = []
        for key, f in sorted(result.files.items()):
            shown = key.shown
            if shown in self.checked:
                continue
            self.checked.add(shown)
            new.append(shown)
            if f.data is None:
                report.files_scanned += 1
                line, message = f.problem or (None, "not read")
                self._error(shown, line, message)
            else:
                scan.check(Path(shown), f.text, KINDS["gitlab-ci"], shown=shown, data=f.data)
            report.includes += result.includes.get(key, [])
        for where, line, message in result.errors:
            self._error(where, line, message)
        files = tuple(FileUse(u.key.shown, u.chain, u.how) for u in result.uses)
        record = ProjectRecord(result.project, result.ref, result.root, result.status, files)
        report.projects.append(record)
        return record, new

    def _error(self, where: str, line: int | None, message: str) -> None:
        if (where, line, message) not in self.errors:
            self.errors.add((where, line, message))
            self.scan.error(where, line, message)


def _windowed(pool: ThreadPoolExecutor, ctx: Context, projects: Iterator[ProjectInfo],
              window: int) -> Iterator[ProjectResult]:
    """Results as they finish, with at most `window` projects in flight."""
    running: set[Future[ProjectResult]] = set()
    for info in projects:
        running.add(pool.submit(lambda i=info: Walk(ctx, i).run()))  # type: ignore[misc]
        if len(running) >= window:
            finished, running = wait(running, return_when=FIRST_COMPLETED)
            yield from (f.result() for f in finished)
    for f in running:
        yield f.result()


def scan_instance(policies: list[Policy], options: ScanOptions, inst: InstanceOptions,
                  stats: Stats | None = None) -> Report:
    stats = stats if stats is not None else Stats()
    api = Api(inst.url, inst.token, inst.job_token)
    cache = BlobCache(inst.cache_dir)
    store = Store(api, cache, options.max_file_bytes)
    ctx = Context(api, store, urlsplit(inst.url).netloc, inst.ref, inst.fetch_remote)
    scan = Scan(policies, options, Path("/"))
    checked: set[str] = set()
    done = journal.restore(inst.state, scan.report, checked) if inst.state else set()
    stats.resumed = len(done)
    collector = Collector(scan, checked)
    todo = (p for p in api.group_projects(inst.group, inst.archived) if p.path not in done)
    with ExitStack() as stack:
        out = stack.enter_context(inst.state.open("a", encoding="utf-8")) if inst.state else None
        pool = stack.enter_context(ThreadPoolExecutor(max(1, inst.concurrency), thread_name_prefix="sunset"))
        for result in _windowed(pool, ctx, todo, max(1, inst.concurrency) * 4):
            mark = journal.Mark.of(scan.report)
            record, new = collector.add(result)
            if out is not None:
                journal.write(out, journal.entry(scan.report, mark, record, new))
            store.forget(k for k in result.files if k.project == result.project)
            stats.projects += 1
            if inst.progress:
                inst.progress(stats.projects + stats.resumed, result.project)
    stats.downloads, stats.cache_hits = store.fetched, cache.hits
    report = scan.report
    report.projects.sort(key=lambda p: p.project)
    report.findings.sort(key=lambda f: (f.location.path, f.location.line, f.location.column, f.rule_id))
    report.errors.sort(key=lambda e: (e.path, e.line or 0, e.message))
    report.includes.sort(key=lambda i: (i.source, i.line, i.target))  # projects finish in any order
    return report
