"""Each matcher kind on structure, at exact positions, and the look-alikes it must ignore."""

from __future__ import annotations

from pathlib import Path

import pytest

from scanner.core.results import Report
from scanner.core.versions import Version
from scanner.engine.scan import ScanOptions, scan
from scanner.rules.catalog import load_policies
from scanner.rules.policy import Policy

from conftest import where
from test_engine import DATA, write


@pytest.fixture(scope="module")
def test_policies() -> list[Policy]:
    return load_policies([DATA])


def run_ci(tmp_path: Path, policies: list[Policy], text: str, target: str = "19.0") -> Report:
    write(tmp_path, {".gitlab-ci.yml": text})
    return scan([tmp_path], policies, ScanOptions(Version.parse(target)))


def test_structure_not_text(tmp_path: Path, test_policies: list[Policy]) -> None:
    report = run_ci(
        tmp_path,
        test_policies,
        (
            "# include: {template: Old.gitlab-ci.yml}\n"
            "Old.gitlab-ci.yml:\n"
            "  script: echo Old.gitlab-ci.yml OLD_VAR\n"
            "  variables:\n"
            "    NOTE: mentions OLD_VAR and old_report\n"
            "old_report:\n"
            "  script: [echo]\n"
        ),
    )
    assert report.findings == []


def test_hidden_job_and_anchor_reported_once_where_written(tmp_path: Path, test_policies: list[Policy]) -> None:
    report = run_ci(
        tmp_path,
        test_policies,
        (
            ".base: &base\n"
            "  variables: &vars\n"
            "    OLD_VAR: x\n"
            "  artifacts:\n"
            "    reports:\n"
            "      old_report: r.json\n"
            "a:\n"
            "  extends: .base\n"
            "  script: [echo]\n"
            "b:\n"
            "  <<: *base\n"
            "  script: [echo]\n"
            "c:\n"
            "  variables: *vars\n"
            "  script: [echo]\n"
        ),
    )
    assert where(report) == {("t-variable", ".gitlab-ci.yml", 3, 5), ("t-jsonpath", ".gitlab-ci.yml", 6, 7)}


def test_command_flags_and_env_at_their_columns(tmp_path: Path, test_policies: list[Policy]) -> None:
    report = run_ci(
        tmp_path,
        test_policies,
        (
            "reg:\n"
            "  variables:\n"
            "    OLD_ENV: from-variables\n"
            "  script:\n"
            "    - echo --old-flag && sudo /usr/local/bin/tool register --old-flag=1 -o x\n"
            "    - |\n"
            "      export OLD_ENV=abc\n"
            "      OLD_ENV=inline tool.exe register \\\n"
            '        --url https://gitlab.example.com --old-flag "$T"\n'
            "    - tool unregister --old-flag  # a different subcommand\n"
            '    - echo "tool register --old-flag"\n'
        ),
    )
    assert where(report) == {
        ("t-command", ".gitlab-ci.yml", 3, 5),
        ("t-command", ".gitlab-ci.yml", 5, 60),
        ("t-command", ".gitlab-ci.yml", 5, 73),
        ("t-command", ".gitlab-ci.yml", 7, 14),
        ("t-command", ".gitlab-ci.yml", 8, 7),
        ("t-command", ".gitlab-ci.yml", 9, 42),
    }


def test_env_without_the_command_is_not_a_finding(tmp_path: Path, test_policies: list[Policy]) -> None:
    report = run_ci(tmp_path, test_policies, "j:\n  variables:\n    OLD_ENV: x\n  script:\n    - export OLD_ENV=1\n")
    assert report.findings == []


def test_variable_references_in_scripts_and_values(tmp_path: Path, test_policies: list[Policy]) -> None:
    report = run_ci(
        tmp_path,
        test_policies,
        (
            "variables:\n"
            "  TOKEN: $OLD_REF\n"
            "  OTHER: {value: 'x ${OLD_REF}', description: d}\n"
            "j:\n"
            "  script:\n"
            "    - 'curl -H \"Authorization: $OLD_REF\" x'\n"
            "    - echo $OLD_REFERENCE %OLD_REF% $env:OLD_REF\n"
        ),
    )
    assert where(report) == {
        ("t-reference", ".gitlab-ci.yml", 2, 10),
        ("t-reference", ".gitlab-ci.yml", 3, 21),
        ("t-reference", ".gitlab-ci.yml", 6, 32),
        ("t-reference", ".gitlab-ci.yml", 7, 27),
        ("t-reference", ".gitlab-ci.yml", 7, 37),
    }


def test_job_token_reach(tmp_path: Path, test_policies: list[Policy]) -> None:
    report = run_ci(
        tmp_path,
        test_policies,
        (
            "j:\n"
            "  needs:\n"
            "    - project: group/upstream\n"
            "      job: build\n"
            "      ref: main\n"
            "    - local-job\n"
            "  script:\n"
            "    - git clone https://gitlab-ci-token:${CI_JOB_TOKEN}@gitlab.example.com/group/lib.git\n"
            '    - \'curl --header "JOB-TOKEN: $CI_JOB_TOKEN" "$CI_API_V4_URL/projects/group%2Fpkg/packages"\'\n'
            '    - curl -H "JOB-TOKEN: $CI_JOB_TOKEN" "$CI_API_V4_URL/projects/$CI_PROJECT_ID/jobs"\n'
            "    - echo gitlab-ci-token CI_JOB_TOKEN group/not-a-call\n"
            "down:\n"
            "  trigger:\n"
            "    project: group/deploy\n"
            "short:\n"
            "  trigger: group/short\n"
        ),
    )
    found = {(f.rule_id, f.location.line, f.location.column, f.matched, f.severity) for f in report.findings}
    assert found == {
        ("t-reach", 3, 16, "group/upstream", "info"),
        ("t-reach", 8, 76, "group/lib", "info"),
        ("t-reach", 9, 74, "group/pkg", "info"),
        # `trigger:` runs the downstream pipeline as the user, not through the job token: not reported
    }


@pytest.mark.parametrize(("target", "severity"), [("16.11", "warning"), ("17.0", "error"), ("19.0", "error")])
def test_severity_follows_the_target(tmp_path: Path, test_policies: list[Policy], target: str, severity: str) -> None:
    report = run_ci(tmp_path, test_policies, "include:\n  - template: Old.gitlab-ci.yml\n", target)
    assert [(f.rule_id, f.severity) for f in report.findings] == [("t-template", severity)]


def test_fingerprint_survives_lines_moving(tmp_path: Path, test_policies: list[Policy]) -> None:
    text = "variables:\n  OLD_VAR: x\n"
    first = run_ci(tmp_path / "a", test_policies, text).findings
    moved = run_ci(tmp_path / "b", test_policies, "# a new comment\n\n" + text).findings
    assert [f.location.line for f in first] == [2]
    assert [f.location.line for f in moved] == [4]
    assert first[0].fingerprint == moved[0].fingerprint


def test_component_file_with_spec_header(tmp_path: Path, test_policies: list[Policy]) -> None:
    write(
        tmp_path,
        {
            "templates/build.yml": (
                "spec:\n  inputs:\n    stage:\n      default: test\n---\n"
                "build:\n  stage: $[[ inputs.stage ]]\n  variables:\n    OLD_VAR: x\n  script: [make]\n"
            ),
            "templates/notes.yml": "not: a component\n",
        },
    )
    report = scan([tmp_path], test_policies, ScanOptions(Version(19, 0)))
    assert where(report) == {("t-variable", "templates/build.yml", 9, 5)}
    assert report.findings[0].location.symbolic == "doc[1]:build.variables.OLD_VAR"


def test_command_run_through_a_container_image(tmp_path: Path, test_policies: list[Policy]) -> None:
    report = run_ci(
        tmp_path,
        test_policies,
        (
            "reg:\n"
            "  script:\n"
            "    - docker run --rm -e OLD_ENV=x registry.example.com/group/tool:1.2 register --old-flag\n"
            "    - docker run --rm -v /tmp:/tmp alpine tool register --old-flag\n"
        ),
    )
    assert where(report) == {
        ("t-command", ".gitlab-ci.yml", 3, 26),  # `-e OLD_ENV=x` given to the container
        ("t-command", ".gitlab-ci.yml", 3, 81),  # the image is the program
        ("t-command", ".gitlab-ci.yml", 4, 57),  # the program runs inside another image
    }


def test_references_in_shell_comments_are_not_uses(tmp_path: Path, test_policies: list[Policy]) -> None:
    report = run_ci(
        tmp_path,
        test_policies,
        (
            "variables:\n"
            "  URL: 'https://x/#$OLD_REF'\n"
            "j:\n"
            "  script:\n"
            "    - |\n"
            "      # we used to pass $OLD_REF here\n"
            '      echo "#$OLD_REF" # $OLD_REF\n'
        ),
    )
    # `#` in a variable value is text; in a script it starts a comment only outside quotes
    assert where(report) == {("t-reference", ".gitlab-ci.yml", 2, 20), ("t-reference", ".gitlab-ci.yml", 7, 14)}


def test_variable_value_condition_wherever_set(tmp_path: Path, test_policies: list[Policy]) -> None:
    report = run_ci(
        tmp_path,
        test_policies,
        (
            "include:\n"
            "  - component: gitlab.example.com/g/c/scan@1\n"
            "    inputs:\n"
            "      IMAGE_VAR: registry/old-image:7\n"
            "variables:\n"
            "  IMAGE_VAR: {value: registry/old-image:6, description: d}\n"
            "j:\n"
            "  variables:\n"
            "    IMAGE_VAR: registry/new-image:1\n"
            "  script: [echo]\n"
        ),
    )
    assert where(report) == {("t-value", ".gitlab-ci.yml", 4, 7), ("t-value", ".gitlab-ci.yml", 6, 3)}


def test_value_test_on_a_list_checks_each_item(tmp_path: Path, test_policies: list[Policy]) -> None:
    report = run_ci(
        tmp_path,
        test_policies,
        (
            "a:\n  extends: .old-template\n  script: [x]\n"
            "b:\n  extends: [.base, .old-template]\n  script: [x]\n"
            "c:\n  extends: [.base]\n  script: [x]\n"
        ),
    )
    assert where(report) == {("t-extends", ".gitlab-ci.yml", 2, 3), ("t-extends", ".gitlab-ci.yml", 5, 20)}


def test_columns_inside_quoted_scalars_with_escapes(tmp_path: Path, test_policies: list[Policy]) -> None:
    report = run_ci(
        tmp_path,
        test_policies,
        "j:\n"
        "  script:\n"
        "    - 'echo ''quoted'' $OLD_REF'\n"
        '    - "echo \\"quoted\\" \\x41 $OLD_REF"\n',
    )
    assert where(report) == {("t-reference", ".gitlab-ci.yml", 3, 24), ("t-reference", ".gitlab-ci.yml", 4, 29)}


def test_jsonpath_step_naming_several_keys_needs_only_one_of_them() -> None:
    # `$.gitaly['listen_addr','auth_token']` finds a document holding either key: neither is
    # required up front (the literal-key prefilter would otherwise skip a file with only one).
    from scanner.rules.jsonpath import compile_path

    _, needed = compile_path("$.gitaly['listen_addr','auth_token']")
    assert needed == frozenset({"gitaly"})
    _, needed = compile_path("$.gitaly.listen_addr")
    assert needed == frozenset({"gitaly", "listen_addr"})


def test_jsonpath_within_limits_a_policy_to_files_holding_more(tmp_path: Path, policies: list[Policy]) -> None:
    # `postgres-12-next-to-gitlab`: the same image is reported next to a GitLab service, not alone.
    write(tmp_path, {
        "with/docker-compose.yml": "services:\n  gitlab:\n    image: gitlab/gitlab-ce:15.11.0-ce.0\n"
                                   "  db:\n    image: postgres:12\n",
        "alone/docker-compose.yml": "services:\n  db:\n    image: postgres:12\n",
    })
    report = scan([tmp_path], policies, ScanOptions(Version.parse("16.0")))
    assert {w for w in where(report) if w[0] == "postgres-12-next-to-gitlab"} == {
        ("postgres-12-next-to-gitlab", "with/docker-compose.yml", 5, 5)}


def test_a_condition_the_file_cannot_show_makes_an_if_warning(tmp_path: Path, policies: list[Policy]) -> None:
    # `sbt-1-0-dependency-scanning` applies only if the project runs Dependency or License Scanning,
    # which `project/build.properties` cannot say: a warning at any target, its message says "If …".
    write(tmp_path, {"project/build.properties": "sbt.version=1.0.4\n"})
    report = scan([tmp_path], policies, ScanOptions(Version.parse("20.0")))
    [finding] = [f for f in report.findings if f.rule_id == "sbt-1-0-dependency-scanning"]
    assert (finding.severity, finding.location.line, finding.location.column) == ("warning", 1, 1)
    assert finding.message.startswith("If this project runs Dependency Scanning or License Scanning: `sbt.version`")
