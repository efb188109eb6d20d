"""A match of a policy in a document, before it becomes a finding: a route, and maybe an exact span."""

from __future__ import annotations

from dataclasses import dataclass

from scanner.core.document import Part
from scanner.core.results import Route
from scanner.core.tree import Span
from scanner.rules.policy import Policy


@dataclass(frozen=True, slots=True)
class Hit:
    policy: Policy
    route: Route
    part: Part
    matched: str
    span: Span | None = None  # an exact span inside a scalar (script tokens)
    # Set when a templated value decides the match (`enabled: {{INCOMING_EMAIL_ENABLED}}`): the
    # finding says "if …" and is at most a warning, because the file alone does not say it applies.
    condition: str = ""
    # What the matcher says about this match beyond the policy's message ("Did you mean `X`?").
    detail: str = ""
