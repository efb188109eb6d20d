"""The `rest-api` matcher's `unless_parameter` on calls read from real Python source: a call is not
reported when it also sends the named parameter with the right value, or with a value sunset cannot
read; the finding is at the reported parameter."""

from __future__ import annotations

from scanner.readers.api.model import RestCall
from scanner.readers.api.python import extract as pysource
from scanner.rules import rest_api
from scanner.rules.schema import validated

SPEC = {
    "kind": "rest-api",
    "endpoints": ["GET /projects/:id/deployments"],
    "parameters": ["updated_after", "updated_before"],
    "unless_parameter": {"name": "order_by", "value": {"equals": "updated_at"}},
}


def _found(spec: dict[str, object], params: str) -> list[tuple[str, str]]:
    text = f'import requests\nrequests.get(f"{{API}}/api/v4/projects/1/deployments", params={{{params}}})\n'
    matcher = rest_api.compile(validated(rest_api.Spec, spec, kind="rest-api"), _no_build)
    calls = [u for u in pysource.extract(text) if isinstance(u, RestCall)]
    lines = text.splitlines()
    return [(name, lines[line - 1][col - 1 : end_col - 1]) for c in calls
            for name, (line, col, _, end_col) in rest_api.hits(matcher, c)]


def _no_build(spec: dict[str, object]) -> rest_api.RestApiMatcher:
    raise AssertionError("rest-api holds no other matchers")


def test_reported_without_the_parameter_or_with_another_value() -> None:
    assert _found(SPEC, '"updated_after": "2024-01-01"') == [("updated_after", "updated_after")]
    assert _found(SPEC, '"updated_before": "2024-01-01", "order_by": "id"') == [("updated_before", "updated_before")]


def test_not_reported_with_the_value_or_a_value_that_cannot_be_read() -> None:
    assert _found(SPEC, '"updated_after": "2024-01-01", "order_by": "updated_at"') == []
    assert _found(SPEC, '"updated_after": "2024-01-01", "order_by": ORDER') == []
    assert _found(SPEC, '"updated_after": "2024-01-01", "order_by": "$ORDER"') == []
    assert _found(SPEC, '"finished_after": "2024-01-01"') == []


def test_unless_without_a_value_is_any_value() -> None:
    spec = {**SPEC, "unless_parameter": {"name": "order_by"}}
    assert _found(spec, '"updated_after": "2024-01-01", "order_by": "id"') == []
    assert _found(spec, '"updated_after": "2024-01-01"') == [("updated_after", "updated_after")]
