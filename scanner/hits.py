"""A match of a policy in a document, before it becomes a finding: a route, and maybe an exact span."""

from __future__ import annotations

from dataclasses import dataclass

from scanner.document import Part
from scanner.model import Route
from scanner.policy import Policy
from scanner.tree import Span


@dataclass(frozen=True, slots=True)
class Hit:
    policy: Policy
    route: Route
    part: Part
    matched: str
    span: Span | None = None  # an exact span inside a scalar (script tokens)
