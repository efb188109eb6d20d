"""Policy data: the pydantic schema of a policy file and the loaded, compiled policy.

A policy is one YAML file, `policies/<group>/<policy-id>.yaml`; its id is the file stem.
`scanner.rules.catalog` loads them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from scanner.core.versions import RELEASE_RE, Version
from scanner.rules.facets import KIND_NAMES
from scanner.rules.fixes import FixSpec
from scanner.rules.spec import Matcher


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


Release = Annotated[str, Field(pattern=RELEASE_RE.pattern)]


class Reference(_Strict):
    title: str
    url: str = Field(pattern=r"^https://")


class HistoryEntry(_Strict):
    """One thing GitLab's own record did to the milestone after the seed was written."""

    release: Release
    event: Literal["announced", "deprecated", "moved", "postponed", "canceled", "removed"]
    removed_in: Release | None = None
    note: str
    reference: str = Field(pattern=r"^https://")


class Example(_Strict):
    before: str
    after: str


class PolicyModel(_Strict):
    title: str = Field(min_length=5, max_length=100)
    summary: str
    message: str = Field(description="one finding's message; `{match}` is replaced by what matched")
    rationale: str
    remediation: str
    replacement: str | None = None
    deprecated_in: Release | None = None
    removed_in: Release | None = None
    breaking: bool
    informational: bool = False
    origin: Literal["seed", "gitlab"]
    history: tuple[HistoryEntry, ...] = ()
    references: tuple[Reference, ...] = Field(min_length=1)
    # The document kinds it applies to; left out, every kind carrying a facet its matcher reads
    # (`scanner.rules.facets`). Filled in when the policy is loaded.
    applies_to: tuple[str, ...] | None = Field(default=None, min_length=1)
    match: dict[str, Any]
    example: Example
    # What `sunset fix` may rewrite (scanner.rules.fixes): one mapping or a list of them.
    fix: tuple[FixSpec, ...] = ()

    @field_validator("applies_to")
    @classmethod
    def _known_kinds(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        unknown = [k for k in value or () if k not in KIND_NAMES]
        if unknown:
            raise ValueError(f"unknown document kind {unknown[0]!r}; known: {', '.join(KIND_NAMES)}")
        return value

    @field_validator("fix", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, dict) else value

    @field_validator("match")
    @classmethod
    def _has_kind(cls, value: dict[str, Any]) -> dict[str, Any]:
        if not isinstance(value.get("kind"), str):
            raise ValueError("a matcher needs a `kind`")
        return value


@dataclass(frozen=True, slots=True)
class Policy:
    """A loaded, validated policy with its matcher compiled."""

    id: str
    source: Path
    data: PolicyModel  # `applies_to` filled in
    matcher: Matcher

    @property
    def applies_to(self) -> tuple[str, ...]:
        """The document kinds it applies to: as written, or derived from its matcher when loaded."""
        return self.data.applies_to or ()

    @property
    def removed(self) -> Version | None:
        return Version.parse(self.data.removed_in) if self.data.removed_in else None

    @property
    def docs_url(self) -> str:
        return self.data.references[0].url

    def history_note(self) -> str:
        """A sentence on what GitLab did to the milestone after the seed, or ''."""
        return " ".join(f"GitLab {h.release}: {h.note}" for h in self.data.history)
