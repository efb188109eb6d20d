"""The kinds of fix a policy may declare, chosen in one explicit dict (`FIX_SPECS`).

A policy's `fix:` is one mapping or a list of them; each names its `kind`, its `tier` and the
parameters of that kind (unknown keys are rejected). Which entry handles a finding is decided by
the finding's `matched` text (`selects`); a finding no entry selects has no automatic fix.

* `safe`: the program behaves the same after the rewrite, on every GitLab release since the one
  that deprecated the old form. Applied by `sunset fix`.
* `unsafe`: the rewrite is what the deprecation asks for, but a person must check it (values
  differ, a secret or a setting elsewhere is needed). Applied only with `sunset fix --unsafe`.
"""

from __future__ import annotations

import functools
from abc import abstractmethod
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

Tier = Literal["safe", "unsafe"]


class _Fix(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    tier: Tier
    note: str | None = Field(default=None, description="what to check after the fix; shown in the policy docs")

    def selects(self, matched: str) -> bool:
        return True

    @abstractmethod
    def changes(self) -> list[str]:
        """One line per rewrite, for the policy docs (each fix kind says what it does)."""


_METHODS = ("GET ", "POST ", "PUT ", "PATCH ", "DELETE ", "HEAD ")


def _last(matched: str) -> str:
    """`input.active` → `active`: a GraphQL argument path names its last step at the finding."""
    return matched.rsplit(".", 1)[-1]


class RenameFix(_Fix):
    """Replace the name the finding points at (a key, flag, variable, field, parameter, template,
    path segment); optionally map the literal value written right after it (`name=false`,
    `name: false`) or compared with it (`.name == "x"`)."""

    kind: Literal["rename"]
    names: dict[str, str] = Field(min_length=1)
    values: dict[str, str] = {}  # literals assigned after the name (`=`, `:`, `=>`)
    compared: dict[str, str] = {}  # literals compared with it (`==`, `!=`)
    value_required: bool = False  # fix only where a literal from `values` is assigned

    def old_name(self, matched: str) -> str | None:
        """The name to replace: the matched text, its last dotted step, or a segment of a matched
        endpoint (`GET /geo_nodes/status` → `geo_nodes`)."""
        for name in (matched, _last(matched)):
            if name in self.names:
                return name
        if matched.startswith(_METHODS):
            segments = matched.split(" ", 1)[1].split("/")
            return next((s for s in segments if s in self.names), None)
        return None

    def selects(self, matched: str) -> bool:
        return self.old_name(matched) is not None

    def changes(self) -> list[str]:
        out = [f"`{old}` → `{new}`" for old, new in self.names.items()]
        out += [f"assigned value `{old}` → `{new}`" for old, new in self.values.items()]
        out += [f"compared value `{old}` → `{new}`" for old, new in self.compared.items()]
        if self.value_required:
            out.append("only where one of those values is written after the name (a read or a variable is left alone)")
        return out


class SetValueFix(_Fix):
    """Replace the scalar value of the key the finding points at."""

    kind: Literal["set-value"]
    values: dict[str, str] = Field(min_length=1)

    def changes(self) -> list[str]:
        return [f"value `{old}` → `{new}`" for old, new in self.values.items()]


class DeleteFix(_Fix):
    """Delete the mapping entry the finding points at, when it stands on lines of its own."""

    kind: Literal["delete"]
    names: tuple[str, ...] = ()  # only findings with these `matched` texts; empty: every finding

    def selects(self, matched: str) -> bool:
        return not self.names or matched in self.names

    def changes(self) -> list[str]:
        what = ", ".join(f"`{n}`" for n in self.names) if self.names else "the entry"
        return [f"delete {what} (its whole lines)"]


class MoveFirstFix(_Fix):
    """Move the sibling entry `key` above the others of the mapping the finding is in."""

    kind: Literal["move-first"]
    key: str

    def changes(self) -> list[str]:
        return [f"move `{self.key}:` (with its lines) above its siblings"]


class AddArgumentFix(_Fix):
    """Add an argument to the GraphQL field the finding points at (in GraphQL files and Python)."""

    kind: Literal["add-argument"]
    argument: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*: \S.*$")

    def changes(self) -> list[str]:
        return [f"add the argument `{self.argument}`"]


FIX_SPECS: dict[str, type[_Fix]] = {
    "rename": RenameFix,
    "set-value": SetValueFix,
    "delete": DeleteFix,
    "move-first": MoveFirstFix,
    "add-argument": AddArgumentFix,
}

FixSpec = Annotated[
    RenameFix | SetValueFix | DeleteFix | MoveFirstFix | AddArgumentFix,
    Field(discriminator="kind"),
]
AnyFix = RenameFix | SetValueFix | DeleteFix | MoveFirstFix | AddArgumentFix

if set(FIX_SPECS.values()) != set(get_args(AnyFix)):  # pragma: no cover - a developer error, caught by any test run
    raise RuntimeError("scanner.rules.fixes: FIX_SPECS and the FixSpec union name different kinds")


@functools.cache
def _adapter() -> TypeAdapter[tuple[AnyFix, ...]]:
    return TypeAdapter(tuple[FixSpec, ...])


def fix_specs(raw: tuple[dict[str, Any], ...]) -> tuple[AnyFix, ...]:
    """A policy's `fix:` entries (already validated when the policy was loaded) as specs."""
    return _adapter().validate_python(raw)


def tier_of(fixes: tuple[AnyFix, ...]) -> str:
    """`safe`, `unsafe`, `safe and unsafe`, or `none`, for the catalog."""
    tiers = sorted({f.tier for f in fixes})
    return " and ".join(tiers) if tiers else "none"
