"""Every message of the catalog, as a user reads it: rendered from the findings of all the `fail`
fixtures under tests/policies/, none may hold a placeholder left unfilled (`{match}`, `{value}`,
`{key}`, `{route[N]}`) or a placeholder filled with the setting's name where its value belongs
(`executor = "executor"`, `name: name`)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from scanner.core.results import Report
from scanner.rules.hints import PLACEHOLDER
from scanner.rules.policy import Policy

from conftest import run_scan

FIXTURES = Path(__file__).parent / "policies"

# `key = "key"`, `key: key`, `'key' => 'key'` in a code span: the key's name printed as its own value
ECHO = re.compile(r"""\s*(?P<q>['"]?)(?P<key>[\w.\-]+)(?P=q)\s*(?:=>|=|:)\s*['"]?(?P<value>[\w.\-]+)['"]?\s*""")


def defects(message: str) -> list[str]:
    """What is wrong with one rendered message (nothing: an empty list)."""
    found = [f"unfilled {m.group(0)}" for m in PLACEHOLDER.finditer(message)]
    for span in re.findall(r"`([^`]*)`", message):
        m = ECHO.fullmatch(span)
        if m and m["key"].rsplit(".", 1)[-1] == m["value"]:
            found.append(f"`{span}` shows the name where the value belongs")
    return found


@pytest.fixture(scope="module")
def report(policies: list[Policy]) -> Report:
    return run_scan(sorted(p for p in FIXTURES.glob("*/fail") if p.is_dir()), policies)


def test_no_rendered_message_holds_a_placeholder_instead_of_its_value(report: Report) -> None:
    wrong = sorted({f"{f.rule_id}: {problem}: {f.message}" for f in report.findings for problem in defects(f.message)})
    assert wrong == []


def test_every_policy_s_message_is_rendered_here(report: Report, policies: list[Policy]) -> None:
    """The test above reads a message of each policy: every one has a finding in its fixtures."""
    assert {p.id for p in policies} - {f.rule_id for f in report.findings} == set()


@pytest.mark.parametrize(
    ("message", "problems"),
    [
        ('`executor = "executor"` uses the deprecated Docker Machine executor', 1),
        ("OmniAuth provider `name: name` was removed", 1),
        ("`gitlab_rails['env'] => 'env'` is set", 0),  # a key that names its value differently is fine
        ("`'provider' => 'provider'` is set", 1),
        ("`{match}` was removed", 1),
        ("`{value:a.b|c}` and {route[-1]} and {key}", 3),
        ('`executor = "docker+machine"` uses the deprecated Docker Machine executor', 0),
        ("`image: {registry, image, tag}` is the chart 1.0 form; `include: template: X` names none", 0),
    ],
)
def test_the_check_finds_what_it_is_meant_to(message: str, problems: int) -> None:
    assert len(defects(message)) == problems, defects(message)
