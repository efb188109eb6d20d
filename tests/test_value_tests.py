"""The value tests of a `match:` (`value:`, `key:`, `within:`/`unless:` values): `non_empty` and
`tag` beside `equals`, `one_of` and `regex`, on every matcher kind that takes one, as a policy
author writes them (docs/custom-policies.md), and how a wrong one is refused."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from scanner.core.tree import Tagged
from scanner.core.versions import Version
from scanner.engine.scan import ScanOptions, scan
from scanner.rules.catalog import check_policies, load_policies
from scanner.rules.spec import ValueTest

from conftest import ROOT, where
from test_engine import write

POLICY = """\
title: Test policy {id}
summary: A policy of the value-test tests.
message: "{id}: {{match}}"
rationale: The value tests need policies of their own.
remediation: Nothing; this is test data.
removed_in: "16.0"
breaking: true
origin: local
references:
  - title: test
    url: https://docs.gitlab.com/update/deprecations/
applies_to: [{kinds}]
match:
{match}
example:
  before: "a: 1"
  after: "b: 1"
"""


def policy_dir(tmp_path: Path, policies: dict[str, tuple[str, str]]) -> Path:
    folder = tmp_path / "policies"
    folder.mkdir()
    for pid, (kinds, match) in policies.items():
        (folder / f"{pid}.yaml").write_text(POLICY.format(id=pid, kinds=kinds, match=match), encoding="utf-8")
    return folder


@pytest.mark.parametrize(
    ("value", "configures"),
    [
        (None, False), ("", False), ("  \t", False), ({}, False), ([], False),
        ("x", True), (" x ", True), (0, True), (False, True), (0.0, True), ({"cpuLimit": None}, True),
        ([None], True), (Tagged("!reference", [".a", "rules"]), True),
    ],
)
def test_non_empty_refuses_what_configures_nothing(value: Any, configures: bool) -> None:
    assert ValueTest(non_empty=True).accepts(value) is configures


def test_tag_accepts_only_values_written_under_that_tag() -> None:
    test = ValueTest(tag="!reference")
    assert test.accepts(Tagged("!reference", [".a", "rules"]))
    assert not test.accepts(Tagged("!include", "a.yml"))
    assert not test.accepts("!reference [.a, rules]")
    assert not test.accepts([Tagged("!reference", [".a", "rules"])])  # a list holding one is not one


def test_non_empty_and_tag_on_every_kind_that_takes_a_value(tmp_path: Path) -> None:
    folder = policy_dir(tmp_path, {
        "v-tree": ("helm-values", '  kind: jsonpath\n  path: "$.runners[\'builds\',\'services\',\'env\']"\n'
                                  "  value: {non_empty: true}"),
        "v-variable": ("gitlab-ci", "  kind: ci-variable\n  names: [OLD_IMAGE]\n  value: {non_empty: true}"),
        "v-flag": ("shell-script", "  kind: command\n  programs: [tool]\n  subcommand: register\n"
                                   '  flags: ["--old"]\n  value: {non_empty: true}'),
        "v-tag": ("gitlab-ci", '  kind: jsonpath\n  path: "$.*.rules"\n  value: {tag: "!reference"}'),
    })
    write(tmp_path / "repo", {
        "chart/values.yaml": (
            "gitlabUrl: https://gitlab.example.com\n"
            "runners:\n"
            "  builds: {}\n"                 # 3: empty map
            "  services:\n"                  # 4: null
            "  env: [{name: A, value: b}]\n"  # 5: a list tested whole: one finding, at the key
        ),
        ".gitlab-ci.yml": (
            "variables:\n"
            "  OLD_IMAGE: ''\n"              # 2: empty
            "a:\n"
            "  variables: {OLD_IMAGE: alpine}\n"  # 4
            "  rules: !reference [.r, rules]\n"   # 5
            "  script: [x]\n"
            "b:\n"
            "  rules: [{when: never}]\n"     # 8: a plain list
            "  script: [x]\n"
        ),
        "register.sh": "tool register --old ''\ntool register --old value\n",
    })
    report = scan([tmp_path / "repo"], load_policies([folder]), ScanOptions(Version.parse("16.0")))
    assert where(report) == {
        ("v-tree", "chart/values.yaml", 5, 3),
        ("v-variable", ".gitlab-ci.yml", 4, 15),
        ("v-tag", ".gitlab-ci.yml", 5, 3),
        ("v-flag", "register.sh", 2, 15),
    }


def test_unless_settles_the_document(tmp_path: Path) -> None:
    folder = policy_dir(tmp_path, {
        "v-unless": ("helm-values", '  kind: jsonpath\n  path: "$.postgresql.image.tag"\n'
                                    '  unless: [{path: "$.postgresql.install", value: {equals: false}}]'),
    })
    values = "postgresql:\n  install: {}\n  image:\n    tag: '12.7'\n"
    write(tmp_path / "repo", {f"{name}/values.yaml": values.format(written) for name, written in
                              [("off", "false"), ("on", "true"), ("quoted", '"false"'), ("left", "~")]})
    write(tmp_path / "repo", {"absent/values.yaml": "postgresql:\n  image:\n    tag: '12.7'\n"})
    report = scan([tmp_path / "repo"], load_policies([folder]), ScanOptions(Version.parse("16.0")))
    assert where(report) == {("v-unless", f"{name}/values.yaml", line, 5)
                             for name, line in [("on", 4), ("quoted", 4), ("left", 4), ("absent", 3)]}


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("{non_empty: false}", "value.non_empty: only `true`"),
        ("{non_empty: null}", "value.non_empty: only `true`"),
        ("{non_empty: true, regex: x}", "value: give exactly one of equals, one_of, regex, non_empty, tag"),
        ("{}", "value: give exactly one of equals, one_of, regex, non_empty, tag"),
        ("{tag: reference}", "String should match pattern"),
        ("{non_empty: yes please}", "non_empty"),
        ("{empty: true}", "Extra inputs are not permitted"),
    ],
)
def test_a_wrong_value_test_is_refused_with_its_field(tmp_path: Path, value: str, problem: str) -> None:
    folder = policy_dir(tmp_path, {"v-bad": ("helm-values", f'  kind: jsonpath\n  path: "$.a"\n  value: {value}')})
    count, problems = check_policies([folder])
    assert count == 1
    [line] = problems
    assert line.startswith(f"{folder / 'v-bad.yaml'}:") and problem in line, line


def test_the_documented_examples_do_what_the_page_says(tmp_path: Path) -> None:
    """docs/custom-policies.md, "Value tests": its two `match:` examples, as written there."""
    page = (ROOT / "docs" / "custom-policies.md").read_text(encoding="utf-8")
    [block] = re.findall(r"```yaml\n(.*?)```", page.split("\n### Value tests\n", 1)[1].split("\n## ", 1)[0], re.S)
    matches = [part.split("match:\n", 1)[1].rstrip() for part in block.split("---\n")]
    folder = policy_dir(tmp_path, {"doc-empty": ("helm-values", matches[0]), "doc-unless": ("helm-values", matches[1])})
    write(tmp_path / "repo", {
        "runner/values.yaml": "gitlabUrl: https://gitlab.example.com\nrunners:\n  builds: {}\n"
                              "  services: {cpuLimit: 200m}\n  helpers:\n",
        "gitlab/values.yaml": "postgresql:\n  install: false\n  image:\n    tag: '12.7'\n",
        "bundled/values.yaml": "postgresql:\n  image:\n    tag: 12.7.0\n",
    })
    report = scan([tmp_path / "repo"], load_policies([folder]), ScanOptions(Version.parse("16.0")))
    assert where(report) == {("doc-empty", "runner/values.yaml", 4, 3), ("doc-unless", "bundled/values.yaml", 3, 5)}
