"""GitLab's CI/CD template names (`policies/ci/ci-template-names.yml`) and how `include: template:`
resolves them (policy ci-template-unknown; the findings themselves are in its fixtures)."""

from __future__ import annotations

from pathlib import Path

import pytest

from scanner.core.versions import Version
from scanner.rules.catalog import load_policies
from scanner.rules.ci_templates import DATA, include_note, known, resolve, suggestions
from scanner.rules.policy import Policy
from scanner.rules.template_unknown import detail

from conftest import run_scan, where

DATA_POLICIES = Path(__file__).parent / "data" / "policies"

TEMPLATES = known()


@pytest.mark.parametrize(
    ("name", "found"),
    [
        ("Jobs/SAST.gitlab-ci.yml", "Jobs/SAST.gitlab-ci.yml"),
        ("SAST.gitlab-ci.yml", "Security/SAST.gitlab-ci.yml"),
        ("DAST.gitlab-ci.yml", "Security/DAST.gitlab-ci.yml"),  # Enterprise Edition looks in Security/
        ("Hugo.gitlab-ci.yml", "Pages/Hugo.gitlab-ci.yml"),
        ("Accessibility.gitlab-ci.yml", "Verify/Accessibility.gitlab-ci.yml"),
        ("Build.gitlab-ci.yml", None),  # Jobs/ is not a category GitLab searches
        ("jobs/sast.gitlab-ci.yml", None),  # names are case-sensitive
        ("License-Scanning.gitlab-ci.yml", "Security/License-Scanning.gitlab-ci.yml"),  # a removed one too
        ("Coverage-Fuzzing.latest.gitlab-ci.yml", "Security/Coverage-Fuzzing.latest.gitlab-ci.yml"),
        ("Container-Scanning.gitlab-ci.yml", "Security/Container-Scanning.gitlab-ci.yml"),
        ("Browser-Performance.gitlab-ci.yml", "Verify/Browser-Performance.gitlab-ci.yml"),
        ("Terraform.gitlab-ci.yml", "Terraform.gitlab-ci.yml"),  # the name itself first
        ("License-Scanning", None),  # no `.gitlab-ci.yml`: "not a valid location"
        ("License-Scanning.gitlab-ci.yaml", None),
        ("../Security/License-Scanning.gitlab-ci.yml", None),  # a path traversal is refused
        ("Security/../Security/SAST.gitlab-ci.yml", None),
        ("Security/SAST.gitlab-ci.yml/", None),
    ],
)
def test_names_resolve_as_gitlab_resolves_them(name: str, found: str | None) -> None:
    template = resolve(name, TEMPLATES)
    assert (template.name if template else None) == found


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("Jobs/SAST.gitlab-ci.yml", None),
        ("$TEMPLATE", None),
        ("Terraform.gitlab-ci.yml", None),  # removed in 18.0: terraform-templates reports it
        ("Managed-Cluster-Applications.gitlab-ci.yml",
         "GitLab removed `Managed-Cluster-Applications.gitlab-ci.yml` in 15.0."),
        ("Jobs/Secret-Detection.gitlab-ci.yaml",
         "A template name ends in `.gitlab-ci.yml`. Did you mean `Jobs/Secret-Detection.gitlab-ci.yml` or "
         "`Security/Secret-Detection.gitlab-ci.yml`?"),
        ("Jobs/Dploy.gitlab-ci.yml",
         "Did you mean `Jobs/Deploy.gitlab-ci.yml` or `Jobs/Deploy/ECS.gitlab-ci.yml` or "
         "`Jobs/Deploy/EC2.gitlab-ci.yml`?"),
        ("My-Company.gitlab-ci.yml", "No CI/CD template of that name."),
    ],
)
def test_what_is_said_of_a_name(name: str, said: str | None) -> None:
    assert detail(name, TEMPLATES) == said


@pytest.mark.parametrize(
    ("name", "note"),
    [
        ("Security/SAST.gitlab-ci.yml", ""),
        ("SAST.gitlab-ci.yml", "GitLab reads `Security/SAST.gitlab-ci.yml`"),
        ("Sast.gitlab-ci.yml", "no CI/CD template of that name"),
        ("$SAST_TEMPLATE", "path uses CI/CD variables; not resolved"),
    ],
)
def test_what_an_include_record_says_of_a_template(name: str, note: str) -> None:
    assert include_note(name) == note


def test_suggestions_prefer_the_same_file_in_another_folder() -> None:
    assert suggestions("Container-Scanning.gitlab-ci.yml", TEMPLATES) == [
        "Jobs/Container-Scanning.gitlab-ci.yml", "Security/Container-Scanning.gitlab-ci.yml"]


def test_the_data_file_is_well_formed() -> None:
    from ruamel.yaml import YAML

    data = YAML(typ="safe").load(DATA.read_text(encoding="utf-8"))
    names = [t if isinstance(t, str) else t["name"] for t in data["templates"]]
    assert len(names) == len(set(names)) == len(TEMPLATES)
    assert all(n.endswith(".gitlab-ci.yml") for n in names)


def test_each_removed_template_is_reported_by_exactly_one_policy(policies: list[Policy]) -> None:
    """A removed template with a `policy` is in that policy's `templates` (ci-template-unknown leaves
    it alone); one without is removed no later than 15.0, the release ci-template-unknown says."""
    by_id = {p.id: p for p in policies}
    unknown_since = Version.parse(by_id["ci-template-unknown"].data.removed_in or "")
    problems = []
    for t in TEMPLATES.values():
        if t.policy:
            templates = getattr(by_id[t.policy].matcher, "templates", frozenset())
            if t.name not in templates:
                problems.append(f"{t.name}: not in {t.policy}'s templates")
        elif t.removed_in and Version.parse(t.removed_in) > unknown_since:
            problems.append(f"{t.name}: removed in {t.removed_in} needs a policy of its own")
    assert problems == []


def test_every_template_a_policy_names_is_a_known_template(policies: list[Policy]) -> None:
    named = {(p.id, t) for p in policies for t in getattr(p.matcher, "templates", ())}
    assert sorted((pid, t) for pid, t in named if t not in TEMPLATES) == []


def test_a_template_a_policy_names_is_left_to_that_policy(tmp_path: Path, policies: list[Policy]) -> None:
    """A user's own `template-include` policy (tests/data/policies: t-template names `Old.gitlab-ci.yml`)
    reports its template; ci-template-unknown reports only the name nobody knows."""
    (tmp_path / ".gitlab-ci.yml").write_text(
        "include:\n  - template: Old.gitlab-ci.yml\n  - template: Olde.gitlab-ci.yml\ntest:\n  script: make\n",
        encoding="utf-8",
    )
    report = run_scan([tmp_path], policies + load_policies([DATA_POLICIES]), "17.0")
    assert where(report) == {("t-template", ".gitlab-ci.yml", 2, 15), ("ci-template-unknown", ".gitlab-ci.yml", 3, 15)}


def test_the_scan_records_which_template_gitlab_reads(tmp_path: Path, policies: list[Policy]) -> None:
    (tmp_path / ".gitlab-ci.yml").write_text(
        "include:\n  - template: SAST.gitlab-ci.yml\n  - template: Jobs/SAST.gitlab-ci.yml\n"
        "  - template: Sast.gitlab-ci.yml\ntest:\n  script: make\n", encoding="utf-8")
    report = run_scan([tmp_path], policies)
    assert [(i.line, i.kind, i.target, i.resolved, i.note) for i in report.includes] == [
        (2, "template", "SAST.gitlab-ci.yml", False, "GitLab reads `Security/SAST.gitlab-ci.yml`"),
        (3, "template", "Jobs/SAST.gitlab-ci.yml", False, ""),
        (4, "template", "Sast.gitlab-ci.yml", False, "no CI/CD template of that name"),
    ]
