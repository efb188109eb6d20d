"""GitLab release numbers (MAJOR.MINOR) and the severity they imply for a target release."""

from __future__ import annotations

import re
from typing import NamedTuple

RELEASE_RE = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)$")


class Version(NamedTuple):
    major: int
    minor: int

    @classmethod
    def parse(cls, text: str) -> Version:
        m = RELEASE_RE.match(text.strip())
        if not m:
            raise ValueError(f"not a GitLab release (MAJOR.MINOR): {text!r}")
        return cls(int(m.group(1)), int(m.group(2)))

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"


def in_effect(removed_in: Version | None, current: Version | None) -> bool:
    """The change took effect at or before the release the instance runs today (`--from`): what the
    upgrade at hand changes is elsewhere."""
    return removed_in is not None and current is not None and removed_in <= current


def severity_for(removed_in: Version | None, informational: bool, target: Version,
                 current: Version | None = None) -> str:
    """error: removed at or before the target; info: informational, or in effect already at the
    release the instance runs (`current`); warning: anything else."""
    if informational or in_effect(removed_in, current):
        return "info"
    if removed_in is not None and removed_in <= target:
        return "error"
    return "warning"


SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}
