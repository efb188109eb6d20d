"""A loaded policy: plain, immutable data with its matcher compiled (`scanner.rules.catalog` loads it
from a file validated against `scanner.rules.schema`). Nothing here imports pydantic, so a catalog
read back from the cache costs no validation.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scanner.core.versions import Version, severity_for
from scanner.rules.hints import Hint
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
class Removal:
    """Where GitLab's record stands today on a policy's removal.

    `status`: `scheduled` (GitLab names the release, `release`), `pending` (announced but without a
    release: REST API v5, a removal taken out of its milestone and re-evaluated), `canceled`, or
    `withdrawn` (GitLab keeps the milestone but says the old way keeps working).
    `announced` is the release first announced (the policy's `removed_in`); it stays in the
    history and the finding's message whatever GitLab did later."""

    status: str
    release: str | None
    announced: str | None


def removal_of(removed_in: str | None, history: tuple[HistoryEntry, ...]) -> Removal:
    """The effective removal: the policy's `removed_in` as first announced, then each move of
    GitLab's record in order (`moved`/`postponed` to a release or to none, `canceled`, `withdrawn`,
    `removed`)."""
    status, release = ("scheduled", removed_in) if removed_in else ("pending", None)
    for h in history:
        if h.event in ("moved", "postponed"):
            status, release = ("scheduled", h.removed_in) if h.removed_in else ("pending", None)
        elif h.event in ("canceled", "withdrawn"):
            status, release = h.event, None
        elif h.event == "removed":
            status, release = "scheduled", h.removed_in or h.release
    return Removal(status, release, removed_in)


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
    replacement: str | None  # the hint as the docs show it (`hints.describe`); findings fill `hints`
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
    hints: tuple[Hint, ...] = ()  # `replacement:` as cases (`scanner.rules.hints`)


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
    def removal(self) -> Removal:
        """GitLab's record today: the effective release and status (`removal_of`)."""
        return removal_of(self.data.removed_in, self.data.history)

    @property
    def removed(self) -> Version | None:
        """The effective removal release (what GitLab's record says today), or None."""
        release = self.removal.release
        return Version.parse(release) if release else None

    def severity_at(self, target: Version, current: Version | None = None) -> str:
        """error when the effective removal is at or before the target; info when informational or
        when GitLab canceled or withdrew the removal (the thing keeps working: worth knowing, never a
        failure); warning otherwise (later, or pending without a release). With `current` (the release
        the instance runs), a change in effect at or before it is info: it is not the upgrade's."""
        removal = self.removal
        informational = self.data.informational or removal.status in ("canceled", "withdrawn")
        return severity_for(self.removed, informational, target, current)

    @property
    def docs_url(self) -> str:
        return self.data.references[0].url

    def history_note(self) -> str:
        """What GitLab did to the milestone after it was first announced, or '' without a history:
        "First announced for 18.0. GitLab 18.0: removal … moved to 20.0." """
        if not self.data.history:
            return ""
        moves = " ".join(f"GitLab {h.release}: {h.note.strip()}" for h in self.data.history)
        first = self.data.removed_in
        return (f"First announced for {first}. " if first else "First announced without a release. ") + moves
