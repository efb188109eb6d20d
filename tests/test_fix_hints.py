"""Fix hints computed from the finding (issue 15): a policy's `replacement:` is a text with placeholders
or a list of cases per document kind / path / match (`scanner.rules.hints`), filled when the finding is
made. Each hint is asserted with its finding's exact place."""

from __future__ import annotations

from pathlib import Path

import pytest

from scanner.rules.catalog import PolicyLoadError, load_policies
from scanner.rules.hints import Hint, describe
from scanner.rules.policy import Policy

from conftest import run_scan


def hints(tmp_path: Path, policies: list[Policy], files: dict[str, str]) -> list[tuple[str, str, int, int, str]]:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    report = run_scan([tmp_path], policies)
    return [(f.rule_id, f.location.path, f.location.line, f.location.column, f.replacement or "")
            for f in report.findings]


def test_each_database_environment_gets_its_own_database(tmp_path: Path, policies: list[Policy]) -> None:
    database = ("production:\n  adapter: postgresql\n  database: gitlab_prod\n"
                "development:\n  main:\n    adapter: postgresql\n    database: gitlabhq_development\n"
                "staging:\n  main:\n    adapter: postgresql\n    host: db\n")
    found = hints(tmp_path, policies, {"config/database.yml": database})
    assert found == [
        # the legacy form without `main:` stopped working in 15.0: that is what it is told
        ("database-legacy-config", "config/database.yml", 3, 3, "main: {adapter: postgresql, database: gitlab_prod}"),
        ("database-ci-section", "config/database.yml", 4, 1,
         "ci: {adapter: postgresql, database: gitlabhq_development, database_tasks: false}"),
        ("database-ci-section", "config/database.yml", 8, 1,  # no database named: GitLab's naming
         "ci: {adapter: postgresql, database: gitlabhq_staging, database_tasks: false}"),
    ]


def test_a_secret_file_hint_is_in_the_syntax_of_its_file(tmp_path: Path, policies: list[Policy]) -> None:
    files = {
        "etc/gitlab/gitlab.rb": "gitlab_rails['service_desk_email_secret_file'] = 'secret'\n",
        "config/gitlab.yml": "production: &base\n  gitlab:\n    host: x\n  incoming_email:\n"
                             "    enabled: true\n    delivery_method: webhook\n    secret_file: .secret\n",
    }
    assert [h for h in hints(tmp_path, policies, files) if h[0] == "mail-webhook-secret-file"] == [
        ("mail-webhook-secret-file", "config/gitlab.yml", 7, 18,
         "incoming_email: {secret_file: /etc/gitlab/mailroom_secret}"),
        ("mail-webhook-secret-file", "etc/gitlab/gitlab.rb", 1, 50,
         "gitlab_rails['service_desk_email_secret_file'] = '/etc/gitlab/mailroom_secret'"),
    ]


def test_a_threshold_becomes_maxretries_with_its_own_number_and_syntax(tmp_path: Path,
                                                                       policies: list[Policy]) -> None:
    files = {
        "etc/gitlab/gitlab.rb": "registry['notifications'] = [{ 'name' => 'geo', 'threshold' => 7 }]\n"
                                "registry['default_notifications_threshold'] = 3\n",
        "registry/config.yml": "version: 0.1\nstorage:\n  filesystem: {}\nnotifications:\n  endpoints:\n"
                               "    - name: geo\n      url: https://geo.example.com\n      threshold: 12\n",
    }
    assert [h for h in hints(tmp_path, policies, files) if h[0] == "registry-notifications-threshold"] == [
        ("registry-notifications-threshold", "etc/gitlab/gitlab.rb", 1, 49, "'maxretries' => 7"),
        ("registry-notifications-threshold", "etc/gitlab/gitlab.rb", 2, 10,
         "registry['default_notifications_maxretries'] = 3"),
        ("registry-notifications-threshold", "registry/config.yml", 8, 7, "maxretries: 12"),
    ]


def test_the_docs_show_every_case_with_its_placeholders() -> None:
    cases = (Hint("gitlab_rails['{key}'] = x", ("omnibus-config",)), Hint("{route[-2]}: {secret_file: x}"),
             Hint("database: {value:main.database|database}", route="^prod"))
    assert describe(cases) == ("gitlab_rails['<key>'] = x (in omnibus-config) · <route[-2]>: {secret_file: x} · "
                               "database: <main.database or database> (at `^prod`)")
    assert describe((Hint("include: component: $CI_SERVER_FQDN/x@<version>"),)) == \
        "include: component: $CI_SERVER_FQDN/x@<version>"


POLICY = """title: A policy for the schema test
summary: s
message: m
rationale: r
remediation: r
deprecated_in: "16.0"
removed_in: "17.0"
breaking: true
origin: gitlab
references: [{title: t, url: "https://docs.gitlab.com/"}]
match: {kind: ci-variable, names: [OLD_NAME]}
example: {before: a, after: b}
"""


@pytest.mark.parametrize(("replacement", "problem"), [
    ('"use {vlaue}"', "replacement.0.text: Value error, `{vlaue}` is not a placeholder"),
    ('"use {key:a.b}"', "replacement.0.text: Value error, `{key:a.b}` is not a placeholder"),
    ("[{kinds: [gitlab-rb], text: x}]", "replacement.0.kinds: Value error, unknown document kind"),
    ('[{route: "(", text: x}]', "replacement.0.route: Value error, '(' is not RE2 syntax (missing ): ()"),
    ("[]", "replacement: Tuple should have at least 1 item"),
])
def test_a_bad_replacement_is_refused_with_its_line(tmp_path: Path, replacement: str, problem: str) -> None:
    (tmp_path / "bad-hint.yaml").write_text(POLICY + f"replacement: {replacement}\n", encoding="utf-8")
    with pytest.raises(PolicyLoadError) as caught:
        load_policies([tmp_path])
    assert str(caught.value).startswith(f"{tmp_path / 'bad-hint.yaml'}:13: {problem}")


def test_a_case_that_cannot_be_filled_gives_way_to_the_next(tmp_path: Path) -> None:
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "old-name.yaml").write_text(
        POLICY + "replacement:\n  - {match: NEVER, text: never}\n  - text: 'NEW_{match} in {route[0]} ({value})'\n"
        "  - text: fallback\n", encoding="utf-8")
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / ".gitlab-ci.yml").write_text("job:\n  script: x\n  variables:\n    OLD_NAME: '1'\n",
                                                      encoding="utf-8")
    report = run_scan([tmp_path / "repo"], load_policies([tmp_path / "policies"]))
    assert [(f.location.line, f.location.column, f.replacement) for f in report.findings] == [
        (4, 5, "NEW_OLD_NAME in job ('1')")]


def test_other_hints_follow_the_finding(tmp_path: Path, policies: list[Policy]) -> None:
    files = {
        "runner/config.toml": 'concurrent = 1\n[[runners]]\n  name = "k"\n  executor = "kubernetes"\n'
                              "  [runners.kubernetes]\n    terminationGracePeriodSeconds = 45\n",
        ".gitlab-ci.yml": "register:\n  script:\n"
                          "    - gitlab-runner register --kubernetes-terminationGracePeriodSeconds 5\n",
        "etc/gitlab/gitlab.rb": "postgres_exporter['per_table_stats'] = false\n",
        "registry/config.yml": "version: 0.1\nstorage:\n  swift:\n    container: registry\n",
    }
    wanted = {"runner-k8s-termination-grace-period", "omnibus-postgres-exporter-per-table-stats",
              "registry-swift-oss-storage"}
    assert [h for h in hints(tmp_path, policies, files) if h[0] in wanted] == [
        ("runner-k8s-termination-grace-period", ".gitlab-ci.yml", 3, 30,
         "--kubernetes-pod_termination_grace_period_seconds and --kubernetes-cleanup_grace_period_seconds"),
        ("omnibus-postgres-exporter-per-table-stats", "etc/gitlab/gitlab.rb", 1, 19,
         "postgres_exporter['flags'] = { 'collector.stat_user_tables' => false }"),
        ("registry-swift-oss-storage", "registry/config.yml", 3, 3,
         "storage: {s3: {bucket: registry, regionendpoint: 'https://…'}}"),
        ("runner-k8s-termination-grace-period", "runner/config.toml", 6, 5,
         "pod_termination_grace_period_seconds = 45 and cleanup_grace_period_seconds = 45"),
    ]


def test_each_renamed_variable_gets_its_own_successor(tmp_path: Path, policies: list[Policy]) -> None:
    pipeline = ("deploy:\n  variables:\n    DAST_API_SPECIFICATION: api.json\n    DAST_API_HOST_OVERRIDE: x:80\n"
                "  script:\n    - echo $CI_BUILD_REF_NAME $CI_BUILD_TOKEN\n")
    assert hints(tmp_path, policies, {".gitlab-ci.yml": pipeline}) == [
        ("dast-api-legacy-variables", ".gitlab-ci.yml", 3, 5, "DAST_API_OPENAPI (same value)"),
        ("dast-api-legacy-variables", ".gitlab-ci.yml", 4, 5, "DAST_API_TARGET_URL"),
        ("ci-build-variables", ".gitlab-ci.yml", 6, 12, "CI_COMMIT_REF_NAME"),
        ("ci-build-variables", ".gitlab-ci.yml", 6, 31, "CI_JOB_TOKEN"),
    ]
