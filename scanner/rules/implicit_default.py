"""`implicit-default`: a setting left out whose default is the deprecated value (a source install's
`incoming_email` without `delivery_method` uses `sidekiq`). Each mapping that would hold it is checked.
Where the `when` setting is a template placeholder (`enabled: {{INCOMING_EMAIL_ENABLED}}`, ERB), the
hit carries the condition: the finding says "if enabled" and is a warning, not silence."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from jsonpath_ng.jsonpath import Child, Fields, JSONPath

from scanner.core.redact import redact
from scanner.rules import spec
from scanner.rules.hits import Hit
from scanner.rules.jsonpath import compile_path, matches, required_keys
from scanner.rules.kind import MatcherKind
from scanner.rules.policy import Policy

if TYPE_CHECKING:
    from scanner.rules.facets import Facets


class Spec(spec.Spec):
    path: str  # JSONPath of the setting; each mapping that would hold it is checked
    default: str | int | bool  # what GitLab uses when the setting is absent
    when: str | None = None  # a sibling key that must be literally `true` (`enabled`)


@dataclass(frozen=True, slots=True)
class ImplicitDefaultMatcher(spec.Matcher):
    kind: ClassVar[str] = "implicit-default"
    parent: JSONPath
    key: str
    required_keys: frozenset[str]
    default: Any
    when: str | None


def compile(s: Spec, build: spec.Build) -> ImplicitDefaultMatcher:
    expr, _ = compile_path(s.path)
    if not (isinstance(expr, Child) and isinstance(expr.right, Fields) and len(expr.right.fields) == 1):
        raise ValueError(f"path: {s.path!r} must end in one plain key (`$.x.delivery_method`)")
    return ImplicitDefaultMatcher(expr.left, expr.right.fields[0], required_keys(expr.left), s.default, s.when)


def evaluate(entries: list[tuple[Policy, ImplicitDefaultMatcher]], facets: Facets) -> Iterator[Hit]:
    doc = facets.doc
    for policy, m in entries:
        for route, parent in matches(doc, m.parent, m.required_keys):
            if len(route) < 2 or not isinstance(parent, dict) or m.key in parent:
                continue
            when = None if m.when is None else parent.get(m.when)
            if m.when is None or when is True:
                yield Hit(policy, route, "key", f"`{m.key}` not set, so `{m.default}`")
            elif isinstance(when, str) and _templated(when):
                yield Hit(policy, route, "key", f"`{m.key}` not set, so `{m.default}`",
                          condition=f"`{m.when}` ({redact(when)}) is true")


def _templated(value: str) -> bool:
    """A value a template engine fills in (`{{VAR}}`, `<%= … %>`, `{% … %}`)."""
    return any(marker in value for marker in ("{{", "<%", "{%"))


# A settings matcher: it reads any tree, and applies by default to settings files.
KIND = MatcherKind(Spec, ImplicitDefaultMatcher, compile, {"tree": evaluate}, applies=("settings-tree",))
