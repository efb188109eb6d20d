"""A loaded policy: plain, immutable data with its matcher compiled (`scanner.rules.catalog` loads it
from a file validated against `scanner.rules.schema`). Nothing here imports pydantic, so a catalog
read back from the cache costs no validation.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scanner.core.versions import Version
from scanner.rules.spec import Matcher

if TYPE_CHECKING:
    from scanner.rules.fixes import FixSpec


@dataclass(frozen=True, slots=True)
class Reference:
    title: str
    url: str


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One thing GitLab's own record did to the milestone after it was first announced."""

    release: str
    event: str
    note: str
    reference: str
    removed_in: str | None = None


@dataclass(frozen=True, slots=True)
class Example:
    before: str
    after: str


@dataclass(frozen=True, slots=True)
class PolicyData:
    """The policy file's fields, validated (`scanner.rules.schema.PolicyModel`)."""

    title: str
    summary: str
    message: str  # one finding's message; `{match}` is replaced by what matched
    rationale: str
    remediation: str
    replacement: str | None
    deprecated_in: str | None
    removed_in: str | None
    breaking: bool
    informational: bool
    origin: str
    history: tuple[HistoryEntry, ...]
    references: tuple[Reference, ...]
    applies_to: tuple[str, ...]  # as written, or derived from the matcher when loaded
    match: dict[str, Any]
    example: Example
    fix: tuple[dict[str, Any], ...]  # validated when loaded; `Policy.fixes` gives the specs


@dataclass(frozen=True, slots=True)
class Policy:
    """A loaded, validated policy with its matcher compiled."""

    id: str
    source: Path
    data: PolicyData
    matcher: Matcher

    @property
    def applies_to(self) -> tuple[str, ...]:
        return self.data.applies_to

    @property
    def fixes(self) -> tuple[FixSpec, ...]:
        """What `sunset fix` may rewrite (`scanner.rules.fixes`; pydantic is imported only here)."""
        from scanner.rules.fixes import fix_specs

        return fix_specs(self.data.fix)

    @property
    def removed(self) -> Version | None:
        return Version.parse(self.data.removed_in) if self.data.removed_in else None

    @property
    def docs_url(self) -> str:
        return self.data.references[0].url

    def history_note(self) -> str:
        """A sentence on what GitLab did to the milestone after it was first announced, or ''."""
        return " ".join(f"GitLab {h.release}: {h.note}" for h in self.data.history)
