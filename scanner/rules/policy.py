"""Policy data: the pydantic schema of a policy file and the loader.

A policy is one YAML file, `policies/<group>/<policy-id>.yaml`; its id is the file stem.
Loading validates every field (unknown keys are rejected), compiles each matcher once
(regexes, JSONPath) and reports any problem as `file:line: field: problem`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from scanner.core.versions import RELEASE_RE, Version
from scanner.fix.specs import FixSpec
from scanner.readers.yamldoc import YamlError, load_yaml
from scanner.rules.matchers import MATCHER_SPECS, Matcher, build_matcher

ID_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
# Every kind of document a policy may apply to; `scanner.engine.kinds.KINDS` maps each to its parser.
KIND_NAMES: tuple[str, ...] = (
    "gitlab-ci", "shell-script", "python-source", "graphql", "js-source", "terraform",
    "omnibus-config", "gitlab-yml", "database-yml", "runner-config", "registry-config",
    "helm-values", "compose", "dockerfile", "env-file", "k8s-manifest", "ruby-source",
)


class PolicyLoadError(Exception):
    """A policy file that cannot be used; the message names file, line and field."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


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
    applies_to: tuple[str, ...] = Field(min_length=1)
    match: dict[str, Any]
    example: Example
    # What `sunset fix` may rewrite (scanner.fix.specs): one mapping or a list of them.
    fix: tuple[FixSpec, ...] = ()

    @field_validator("applies_to")
    @classmethod
    def _known_kinds(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [k for k in value if k not in KIND_NAMES]
        if unknown:
            raise ValueError(f"unknown document kind {unknown[0]!r}; known: {', '.join(KIND_NAMES)}")
        return value

    @field_validator("fix", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, dict) else value

    @field_validator("match")
    @classmethod
    def _known_kind(cls, value: dict[str, Any]) -> dict[str, Any]:
        kind = value.get("kind")
        if kind not in MATCHER_SPECS:
            raise ValueError(f"unknown matcher kind {kind!r}; known: {', '.join(sorted(MATCHER_SPECS))}")
        return value


@dataclass(frozen=True, slots=True)
class Policy:
    """A loaded, validated policy with its matcher compiled."""

    id: str
    source: Path
    data: PolicyModel
    matcher: Matcher

    @property
    def removed(self) -> Version | None:
        return Version.parse(self.data.removed_in) if self.data.removed_in else None

    @property
    def docs_url(self) -> str:
        return self.data.references[0].url

    def history_note(self) -> str:
        """A sentence on what GitLab did to the milestone after the seed, or ''."""
        return " ".join(f"GitLab {h.release}: {h.note}" for h in self.data.history)


def _line_of(tree_lines: dict[tuple[str | int, ...], int], loc: tuple[str | int, ...]) -> int:
    """The deepest known line for a pydantic error location."""
    for cut in range(len(loc), -1, -1):
        if loc[:cut] in tree_lines:
            return tree_lines[loc[:cut]]
    return 1


def _load_one(path: Path) -> Policy:
    try:
        text = path.read_text(encoding="utf-8")
        doc = load_yaml(text, str(path))
    except (OSError, UnicodeDecodeError) as exc:
        raise PolicyLoadError(f"{path}:1: cannot read policy: {exc}") from exc
    except YamlError as exc:
        raise PolicyLoadError(f"{path}:{exc.line}: invalid YAML: {exc.message}") from exc
    if not doc.roots or not isinstance(doc.roots[0], dict):
        raise PolicyLoadError(f"{path}:1: a policy file must be a mapping")
    root = doc.roots[0]
    stem = path.stem
    if not ID_RE.match(stem):
        raise PolicyLoadError(f"{path}:1: id: file stem {stem!r} is not a lowercase-dashed policy id")
    try:
        model = PolicyModel.model_validate(root)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(err["loc"])
        field = ".".join(str(p) for p in loc) or "(top)"
        raise PolicyLoadError(f"{path}:{_line_of(doc.key_lines(0), loc)}: {field}: {err['msg']}") from None
    try:
        matcher = build_matcher(model.match)
    except ValueError as exc:
        line = _line_of(doc.key_lines(0), ("match",))  # positions only when reporting a problem
        raise PolicyLoadError(f"{path}:{line}: match: {exc}") from None
    return Policy(id=stem, source=path, data=model, matcher=matcher)


def builtin_policy_dir() -> Path:
    """The policies shipped with sunset (installed package data or the source checkout)."""
    package = Path(__file__).resolve().parents[1]  # scanner/
    installed = package / "policies"
    return installed if installed.is_dir() else package.parent / "policies"


def load_policies(dirs: Iterable[Path]) -> list[Policy]:
    """Load every `*.yaml` below each directory; duplicate ids are an error."""
    policies: dict[str, Policy] = {}
    for directory in dirs:
        if not directory.is_dir():
            raise PolicyLoadError(f"{directory}: policy directory does not exist")
        for path in sorted(directory.rglob("*.yaml")):
            policy = _load_one(path)
            if policy.id in policies:
                first = policies[policy.id].source
                raise PolicyLoadError(f"{path}:1: id: duplicate policy id {policy.id!r} (also {first})")
            policies[policy.id] = policy
    return sorted(policies.values(), key=lambda p: p.id)
