"""What a format may need besides the report (`scanner.report.formats` passes it to every format)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scanner.rules.policy import Policy


@dataclass(frozen=True, slots=True)
class RenderOptions:
    """What a format may need besides the report; each format reads only its own fields."""

    policies: Sequence[Policy] = ()  # sarif: the rules' help text comes from the policies
    color: bool = False  # text: ANSI colours
    env: Mapping[str, str] = field(default_factory=dict)  # markdown: GitLab CI variables for file links
    width: int = 0  # text: clip snippets to this many columns around the finding (0: never clip)


def fix_tiers(policies: Sequence[Policy]) -> dict[str, str]:
    """Policy id -> the tier `sunset fix` applies its fix at: `safe` (by default) when any of its fixes
    is safe, else `unsafe` (with `--unsafe`). Policies without a fix are absent."""
    tiers: dict[str, str] = {}
    for p in policies:
        found = {str(f.get("tier")) for f in p.data.fix}
        if found:
            tiers[p.id] = "safe" if "safe" in found else "unsafe"
    return tiers
