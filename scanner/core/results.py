"""The immutable records a scan produces: locations, findings, input errors, includes, the report."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scanner.core.tree import Span

Route = tuple[Any, ...]  # document index first, then keys and sequence indexes
SNIPPET_CHARS = 320  # the most characters of a line a finding shows
SNIPPET_BEFORE = 100  # of which before the finding's column, when the line is longer


def route_text(route: Route) -> str:
    """`(0, 'include', 2, 'template')` → `include[2].template`; later documents get a `doc[N]:` prefix."""
    parts: list[str] = []
    for step in route[1:]:
        if isinstance(step, int):
            parts.append(f"[{step}]")
        else:
            text = str(step)
            plain = text.replace("_", "").replace("-", "").isalnum()
            parts.append(("." if parts else "") + (text if plain else repr(text)))
    body = "".join(parts) or "$"
    return f"doc[{route[0]}]:{body}" if route and route[0] else body


@dataclass(frozen=True, slots=True)
class Location:
    path: str  # relative to the scan base, POSIX separators
    line: int
    column: int
    end_line: int
    end_column: int
    symbolic: str
    snippet: str
    # Where `column`/`end_column` fall in `snippet` once it is redacted (a masked value is shorter
    # or longer than the text it hides); 0: the same as in the file. Not part of the JSON contract.
    snippet_column: int = 0
    snippet_end_column: int = 0
    # How many characters of the line come before `snippet` (a long line is clipped around the
    # finding: `SNIPPET_CHARS`). Not part of the JSON contract.
    snippet_offset: int = 0

    def snippet_span(self) -> tuple[int, int | None]:
        """The 1-based (start, end) columns of the finding in `snippet`'s first line; end None when
        the finding runs past that line."""
        start = self.snippet_column or self.column - self.snippet_offset
        if self.end_line != self.line:
            return start, None
        return start, self.snippet_end_column or min(self.end_column - self.snippet_offset, len(self.snippet) + 1)

    @classmethod
    def clipped(cls, path: str, span: Span, symbolic: str, line: str) -> Location:
        """A finding's place with its line as the snippet, clipped around the finding when long, so
        output stays linear in the input however long a line is."""
        if len(line) <= SNIPPET_CHARS:
            return cls.of(path, span, symbolic, line)
        start = max(0, min(span[1] - 1 - SNIPPET_BEFORE, len(line) - SNIPPET_CHARS))
        return cls(path, span[0], span[1], span[2], span[3], symbolic, line[start : start + SNIPPET_CHARS],
                   snippet_offset=start)

    @classmethod
    def of(cls, path: str, span: Span, symbolic: str, snippet: str) -> Location:
        return cls(path, span[0], span[1], span[2], span[3], symbolic, snippet)


@dataclass(frozen=True, slots=True)
class Move:
    """One change GitLab's record made to a removal after it was first announced."""

    release: str
    event: str  # moved | postponed | canceled | removed | announced | deprecated
    removed_in: str | None
    note: str


# The `origin:` of GitLab's own deprecations; any other origin is a local or organisation's policy
# (`origin: local`, `origin: acme`), which every format names as such.
GITLAB_ORIGINS = frozenset({"gitlab", "deprecation-summary"})


@dataclass(frozen=True, slots=True)
class Finding:
    rule_id: str
    title: str
    severity: str
    message: str
    location: Location
    deprecated_in: str | None
    removed_in: str | None
    replacement: str | None
    docs_url: str
    matched: str
    fingerprint: str
    # GitLab's record today: `removed_in` is the effective release; `removal` is scheduled | pending |
    # canceled; `first_announced` the release first announced; `history` every move since.
    removal: str = "scheduled"
    first_announced: str | None = None
    history: tuple[Move, ...] = ()
    origin: str = "gitlab"  # the policy's `origin:`; not in GITLAB_ORIGINS: a local policy

    @property
    def local(self) -> bool:
        """A policy of your own (`origin: local`, an organisation's name), not one of GitLab's."""
        return self.origin not in GITLAB_ORIGINS


@dataclass(frozen=True, slots=True)
class InputError:
    path: str
    line: int | None
    message: str


@dataclass(frozen=True, slots=True)
class IncludeRecord:
    source: str
    line: int
    kind: str  # local | template | project | remote | component
    target: str
    resolved: bool
    note: str = ""


@dataclass(frozen=True, slots=True)
class FileUse:
    """A file one project's pipeline reaches (an instance scan): its shown name and how it got there."""

    path: str  # `group/project@ref:path`, as findings name it
    chain: tuple[str, ...]  # the files that include it, from the project's root; () for the root
    how: str  # root | local | project | component | remote


@dataclass(frozen=True, slots=True)
class ProjectRecord:
    """One project of an instance scan (`sunset scan --gitlab`)."""

    project: str  # full path
    ref: str
    root: str  # the CI/CD configuration file, shown like a finding's path; "" when there is none
    status: str  # scanned | no CI/CD configuration | empty repository | error | …
    files: tuple[FileUse, ...] = ()


@dataclass(frozen=True, slots=True)
class Diff:
    """What a scan was compared with (`sunset scan --diff-base REF`, the merge request's target): the
    findings and input errors also there, and the findings there that are gone. Fingerprints match
    findings, so a finding whose line moved is the same finding."""

    base: str  # as the user named it
    commit: str  # the commit compared with
    existing: frozenset[str] = frozenset()  # fingerprints of findings also at the base
    existing_errors: frozenset[tuple[str, str]] = frozenset()  # (path, message) of input errors also there
    fixed: tuple[Finding, ...] = ()  # findings at the base that are gone
    note: str = ""  # how the base was chosen, when it is not the merge base

    def is_new(self, f: Finding) -> bool:
        return f.fingerprint not in self.existing

    def is_new_error(self, e: InputError) -> bool:
        return (e.path, e.message) not in self.existing_errors


@dataclass(frozen=True, slots=True)
class UpgradeStep:
    """One step of the upgrade from the release the instance runs to the target: a required upgrade
    stop of GitLab's upgrade path (or the target itself) and the findings whose change takes effect
    after the step before it and at or before this one."""

    release: str
    required: bool  # a required stop (`conditional` ones are required of some instances only)
    conditional: bool
    note: str
    findings: tuple[int, ...] = ()  # indexes into the report's findings (a redacted copy keeps them)


@dataclass(slots=True)
class Report:
    target: str
    current: str | None = None  # the release the instance runs (`--from`); None: not known
    upgrade: tuple[UpgradeStep, ...] = ()  # with both ends known: the stops and what breaks at each
    findings: list[Finding] = field(default_factory=list)
    errors: list[InputError] = field(default_factory=list)
    includes: list[IncludeRecord] = field(default_factory=list)
    # what the user should know but that does not fail the run: suppressions that suppress nothing
    warnings: list[InputError] = field(default_factory=list)
    files_scanned: int = 0
    suppressed: int = 0
    baselined: int = 0
    projects: list[ProjectRecord] = field(default_factory=list)  # instance scans only
    diff: Diff | None = None  # `--diff-base`: what is new against the base

    def new_findings(self) -> list[Finding]:
        """The findings the change adds: all of them without a diff."""
        return self.findings if self.diff is None else [f for f in self.findings if self.diff.is_new(f)]

    def new_errors(self) -> list[InputError]:
        return self.errors if self.diff is None else [e for e in self.errors if self.diff.is_new_error(e)]

    def severity_counts(self) -> dict[str, int]:
        counts = {"error": 0, "warning": 0, "info": 0}
        for f in self.findings:
            counts[f.severity] += 1
        return counts


def internal_error(exc: BaseException) -> str:
    """An input error for an exception sunset did not expect on one file: a bug, said as one."""
    return f"internal error (a bug in sunset; please report it): {type(exc).__name__}: {exc}; file not fully checked"
