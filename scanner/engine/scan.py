"""The scan: what it is asked to do (`ScanOptions`, the command's `Plan`), then discover pipeline
roots, follow their includes, evaluate policies, build the report.

Each file is read, parsed and evaluated once per scan (keyed by its real path), however many pipelines include it.
Include problems (missing files, cycles, escapes, nesting over GitLab's limits) are errors on the including line.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from scanner.core.document import Document
from scanner.core.files import (
    CI_NAMES,
    MAX_FILE_BYTES,
    MISSING,
    ReadProblem,
    Skipped,
    inside,
    named_repo_root,
    not_scanned,
    path_problem,
    printable,
    read_text,
    relative,
    repo_root_of,
    scan_base,
    walk,
)
from scanner.core.lines import lf_line_ends
from scanner.core.results import Finding, IncludeRecord, InputError, Report, internal_error
from scanner.core.tree import ParseError, Tree
from scanner.core.versions import Version
from scanner.engine.filelog import FileLog
from scanner.engine.findings import FindingRules, Recorder
from scanner.engine.globs import gitignore
from scanner.engine.localinclude import MAX_INCLUDE_DEPTH, MAX_INCLUDES, Wildcards, local_targets
from scanner.engine.localinclude import Pipeline as _Pipeline
from scanner.engine.recognise import PIPELINE, Recognition
from scanner.readers import ci
from scanner.rules import ci_templates
from scanner.rules.documents import KINDS, DocumentKind
from scanner.rules.evaluate import PolicyIndex, evaluate
from scanner.rules.hits import Hit
from scanner.rules.policy import Policy


@dataclass(frozen=True, slots=True)
class ScanOptions:
    target: Version
    current: Version | None = None  # the release the instance runs today (`--from`, `--gitlab`)
    max_file_bytes: int = MAX_FILE_BYTES
    progress: Callable[[int, str], None] | None = None
    today: date | None = None  # for suppression expiry; None = today
    severity: dict[str, str] = field(default_factory=dict)
    baseline: frozenset[str] = frozenset()
    exclude: tuple[str, ...] = ()  # gitignore patterns (pathspec), from `exclude_base`
    exclude_base: Path | None = None  # the configuration file's folder; None: the scan base
    kinds: dict[str, str] = field(default_factory=dict)  # glob relative to the scan base -> document kind
    display: Path | None = None  # reported paths are relative to it (the command's cwd); None: the scan base
    ci_configs: tuple[CiConfig, ...] = ()  # custom CI/CD configuration files (GitLab's project setting)
    stdin: StdinFile | None = None  # `sunset scan -`
    # told of every file: (path as shown, "read" or "skipped", the kind and why, or why not) — `--show-files`
    files: Callable[[str, str, str], None] | None = None


@dataclass(frozen=True, slots=True)
class StdinFile:
    """`sunset scan -`: the text read from standard input (or why it could not be read) and the name
    it is scanned as (`--stdin-filename`: its kind, its place for local includes and the path shown).
    Without a name it is a pipeline file (`.gitlab-ci.yml` in the working directory) shown as `-`."""

    text: str | ReadProblem
    name: str | None = None


@dataclass(frozen=True, slots=True)
class CiConfig:
    """A custom CI/CD configuration file as the user named it: a path (made absolute from where it was
    given), `path@group/project` or a URL; `source` and `line` say where it was named."""

    value: str
    source: str  # `--ci-config`, or the configuration file's absolute path
    line: int = 0
    given: str = ""  # as the user wrote it, for messages

    def where(self, base: Path) -> str:
        return relative(Path(self.source), base) if os.path.isabs(self.source) else self.source

    def repository(self) -> Path:
        """The repository of the configuration file that named it: all such a file may name."""
        return named_repo_root(Path(self.source), Path(self.source).parent, by_name=False)


@dataclass(frozen=True, slots=True)
class Plan:
    """One scan as the user asked for it: flags and `.sunset.yml` resolved (`scanner.commands.scan`)."""

    paths: list[Path]
    policies: list[Policy]
    options: ScanOptions
    fail_on: str


@dataclass(slots=True)
class Scan:
    policies: list[Policy]
    options: ScanOptions
    base: Path  # `exclude:` and `kinds:` globs are relative to it (the scanned folder)
    observer: Callable[[Finding, Hit, Document], None] | None = None  # see `Recorder.observer`
    report: Report = field(init=False)
    indexes: dict[str, PolicyIndex] = field(init=False)
    recorder: Recorder = field(init=False)
    excluded: Any = field(init=False)  # a pathspec.GitIgnoreSpec, or None
    recognition: Recognition = field(init=False)
    seen: set[Path] = field(default_factory=set)  # real paths; documents are not kept once checked
    wildcards: Wildcards = field(default_factory=Wildcards)
    log: FileLog = field(init=False)  # `sunset scan --show-files`

    def __post_init__(self) -> None:
        o = self.options
        self.report = Report(target=str(o.target), current=str(o.current) if o.current else None)
        rules = FindingRules(o.target, o.today or date.today(), o.severity, o.baseline, o.current)
        self.recorder = Recorder(self.report, rules, frozenset(p.id for p in self.policies), observer=self.observer)
        self.excluded = gitignore(o.exclude) if o.exclude else None
        self.recognition = Recognition.of(o.kinds)
        self.log = FileLog(o.files, self.shown, o.exclude, o.exclude_base or self.base)
        self.indexes = {
            name: PolicyIndex([p for p in self.policies if kind.takes(p.applies_to)]) for name, kind in KINDS.items()
        }

    def run(self, paths: Iterable[Path]) -> Report:
        o = self.options
        for arg in paths:
            arg = Path(os.path.abspath(arg))
            if arg.is_dir():
                for path in walk(arg, on_skip=self.log.folder if o.files else None):
                    if not isinstance(path, Skipped):
                        self.dispatch(path, arg, explicit=False)
                    elif not self.is_excluded(path.path):
                        self.error(path.path, None, path.message, skipped=True)
            elif (problem := path_problem(arg)) is None:
                self.dispatch(arg, named_repo_root(arg), explicit=True)
            else:
                self.error(arg, None, "no such file or directory" if problem == MISSING else not_scanned(problem),
                           skipped=True)
        if self.options.stdin is not None:
            self.stdin(self.options.stdin)
        for config in self.options.ci_configs:
            self.ci_config(config)
        self.recorder.finish()
        self.report.findings.sort(key=lambda f: (f.location.path, f.location.line, f.location.column, f.rule_id))
        self.report.errors.sort(key=lambda e: (e.path, e.line or 0, e.message))
        return self.report

    def error(self, path: Path | str, line: int | None, message: str, skipped: bool = False) -> None:
        """An input error; `skipped`: the file is not read because of it (`--show-files` says so)."""
        where = printable(path) if isinstance(path, str) else self.shown(path)
        self.report.errors.append(InputError(where, line, printable(message)))
        if skipped:
            self.log.skipped(where, printable(message))

    def shown(self, path: Path) -> str:
        return relative(path, self.options.display or self.base)

    def is_excluded(self, path: Path) -> bool:
        """The user excluded it (`exclude:` in .sunset.yml)."""
        if self.excluded is None:
            return False
        return bool(self.excluded.match_file(relative(path, self.options.exclude_base or self.base)))

    def dispatch(self, path: Path, top: Path, explicit: bool, kind: DocumentKind | None = None) -> None:
        """A pipeline root starts a pipeline; a file another kind claims is checked on its own. A file
        named on the command line (`top`: its repository root) that fits no kind is reported."""
        rel = relative(path, self.base)
        if kind is None and explicit:
            kind = self.recognition.named(path, rel, self.options.max_file_bytes)
            if kind is None:
                self.error(path, None, "not recognised: no GitLab file kind fits it; if it is one, name its kind "
                           f"under `kinds:` in .sunset.yml ({', '.join(KINDS)})", skipped=True)
                return
        elif kind is None:
            kind = self.recognition.walked(path, rel)
            if kind is None:
                self.log.unrecognised(path, self.is_excluded)
                return
        pipeline = _Pipeline(top if explicit else repo_root_of(path, top))
        self.log.why(path, "named on the command line" if explicit else "pipeline root" if kind is PIPELINE else "")
        if kind is PIPELINE:
            self.visit(path, path.resolve(), pipeline, ())
        else:
            self.load(path, path.resolve(), pipeline, kind)

    def ci_config(self, config: CiConfig) -> None:
        """A custom CI/CD configuration file: a pipeline root when it is a path; another project's file
        or a URL is recorded like an include of that kind (never fetched: the scanner works offline)."""
        value, source = config.value, config.where(self.options.display or self.base)
        if re.match(r"^https?://", value):
            self.report.includes.append(IncludeRecord(source, config.line, "remote", value, False,
                                                      "custom CI/CD configuration file; not fetched"))
        elif "@" in value:
            file, _, project = value.rpartition("@")
            self.report.includes.append(IncludeRecord(source, config.line, "project", f"{project}:{file}",
                                                      False, "custom CI/CD configuration file in another project"))
        elif os.path.isabs(config.source) and not inside(Path(value), root := config.repository()):
            self.error(source, config.line or None, f"CI/CD configuration file `{config.given or value}` is outside "
                       f"the repository ({root}); not read")
        elif (path := Path(os.path.abspath(value))).is_file():
            self.log.why(path, f"custom CI/CD configuration file ({source}{f':{config.line}' if config.line else ''})")
            self.dispatch(path, named_repo_root(path, by_name=False), explicit=True, kind=PIPELINE)
        else:
            missing = config.given or value
            self.error(source, config.line or None, f"CI/CD configuration file `{missing}` does not exist")

    def load(self, path: Path, real: Path, pipeline: _Pipeline, kind: DocumentKind = PIPELINE) -> Document | None:
        """Read, parse and check a file the first time it is reached; None if unreadable or seen before."""
        if real in self.seen:
            return None
        self.seen.add(real)
        if self.is_excluded(path):
            self.log.excluded(path)
            return None
        text = read_text(real, pipeline.repo_real, self.options.max_file_bytes)
        if isinstance(text, ReadProblem):
            self.error(path, text.line, text.message, skipped=True)
            return None
        return self.check(path, text, kind)

    def check(
        self, path: Path, text: str, kind: DocumentKind, shown: str = "", data: Tree | None = None
    ) -> Document | None:
        """Check a file's text (parsed unless `data` is given); `shown` names files not on disk (scanner.instance).
        A bug on one file never stops the scan: it is an input error on that file."""
        where: Path | str = shown or path
        self.report.files_scanned += 1
        self.log.read(where, path, kind.name)
        if self.options.progress:
            self.options.progress(self.report.files_scanned, shown or self.shown(path))
        try:
            return self._check(path, text, kind, where, data)
        except ParseError as exc:
            self.error(where, exc.line, exc.message)
        except Exception as exc:  # noqa: BLE001 - said, with the file
            self.error(where, None, internal_error(exc))
        return None

    def _check(self, path: Path, text: str, kind: DocumentKind, where: Path | str, data: Tree | None) -> Document:
        data = kind.parse(lf_line_ends(text)) if data is None else data  # a lone CR ends a line for every reader
        for line, message in data.warnings:  # statements not read; the rest of the file was
            self.error(where, line, message)
        doc = Document(where if isinstance(where, str) else self.shown(path), path, kind.name, text, data)
        self.report.warnings += [InputError(printable(doc.path), n, printable(m)) for n, m in data.notices]  # no error
        self.recorder.record(doc, evaluate(self.indexes[kind.name], doc))
        for i, (inner_kind, inner) in enumerate(data.embedded):  # a compose service's GITLAB_OMNIBUS_CONFIG
            inner_doc = Document(doc.path, path, inner_kind, text, inner, host=(kind.name, i, len(data.warnings)))
            self.recorder.record(inner_doc, evaluate(self.indexes[inner_kind], inner_doc), suppressions_checked=True)
        return doc

    def stdin(self, given: StdinFile) -> None:
        """`sunset scan -`: the text checked as if it lay at its name in the working directory (which it
        replaces, if that file exists); a pipeline's local includes are read from that repository."""
        path = Path(os.path.abspath(given.name or CI_NAMES[0]))
        shown = self.shown(path) if given.name else "-"
        if isinstance(given.text, ReadProblem):
            self.error(shown, given.text.line, given.text.message)
            return
        kind = PIPELINE if not given.name else self.recognition.of_text(
            path, relative(path, self.base), given.text, self.options.max_file_bytes)
        if kind is None:
            self.error(shown, None, f"not recognised: no GitLab file kind fits the name; name another with "
                       f"--stdin-filename, or its kind under `kinds:` in .sunset.yml ({', '.join(KINDS)})")
            return
        real = path.resolve()
        self.seen.add(real)
        self.log.why(path, "standard input")
        doc = self.check(path, given.text, kind, shown=shown)
        if doc is not None and kind is PIPELINE:
            self.includes(doc, path, _Pipeline(named_repo_root(path)), (real,))

    def visit(self, path: Path, real: Path, pipeline: _Pipeline, stack: tuple[Path, ...]) -> None:
        doc = self.load(path, real, pipeline)
        if doc is not None:
            self.includes(doc, path, pipeline, stack + (real,))

    def includes(self, doc: Document, path: Path, pipeline: _Pipeline, stack: tuple[Path, ...]) -> None:
        """Follow a pipeline file's includes; `stack`: the files including it, itself last."""
        try:
            entries = list(ci.include_entries(doc))
        except Exception as exc:  # noqa: BLE001 - as in `load`
            self.error(path, None, internal_error(exc))
            return
        for entry in entries:
            self.follow(doc, entry, pipeline, stack)

    def follow(self, doc: Document, entry: ci.IncludeEntry, pipeline: _Pipeline, stack: tuple[Path, ...]) -> None:
        line = doc.span(entry.route, "value")[0]
        if entry.kind == "invalid":
            self.error(doc.path, line, entry.problem)
            return
        unresolved = "$" in entry.target
        notes = ["child pipeline (trigger:include)"] if entry.child else []
        notes += [ci_templates.include_note(entry.target)] if entry.kind == "template" else []  # `$`: not resolved
        notes += ["path uses CI/CD variables; not resolved"] if unresolved and entry.kind != "template" else []
        note = "; ".join(n for n in notes if n)
        shown = printable(entry.target)
        if entry.kind != "local" or unresolved:
            self.report.includes.append(IncludeRecord(doc.path, line, entry.kind, shown, False, note))
            return
        targets = self.local_targets(doc, entry.target, line, pipeline)
        self.report.includes.append(IncludeRecord(doc.path, line, "local", shown, bool(targets), note))
        for target, real in targets:
            self.log.why(target, f"{'child pipeline of' if entry.child else 'included by'} {doc.path}:{line}")
            if entry.child:  # a child pipeline is a root of its own, with its own include limits
                self.visit(target, real, _Pipeline(pipeline.repo), ())
            elif real in stack:
                chain = " → ".join(self.shown(p) for p in stack[stack.index(real) :] + (real,))
                self.error(doc.path, line, f"include cycle: {chain}")
            elif len(stack) > MAX_INCLUDE_DEPTH:
                self.error(doc.path, line, f"includes nested deeper than GitLab's limit of {MAX_INCLUDE_DEPTH}")
            else:
                pipeline.includes += 1
                if pipeline.includes > MAX_INCLUDES and not pipeline.over_limit:
                    pipeline.over_limit = True
                    self.error(doc.path, line, f"more than {MAX_INCLUDES} includes in one pipeline; GitLab rejects it")
                self.visit(target, real, pipeline, stack)

    def local_targets(self, doc: Document, target: str, line: int, pipeline: _Pipeline) -> list[tuple[Path, Path]]:
        def may_include(path: Path) -> bool:  # not a file of another kind (database.yml, compose, Helm, k8s)
            return self.recognition.walked(path, relative(path, self.base), by_content=False) in (None, PIPELINE)

        return local_targets(target, pipeline, self.wildcards, lambda m: self.error(doc.path, line, m), may_include)


def scan(paths: list[Path], policies: list[Policy], options: ScanOptions) -> Report:
    return Scan(policies, options, scan_base(paths or [Path(os.curdir)])).run(paths)  # `scan -` alone: the cwd
