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
