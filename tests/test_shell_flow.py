"""Shell as users write it: helpers around HTTP clients and GitLab's commands, variables holding
URLs, commands run remotely or nested — each found at its exact place, and near-misses not at all."""

from __future__ import annotations

from pathlib import Path

from scanner.rules.policy import Policy

from conftest import run_scan, where

Found = set[tuple[str, str, int, int]]


def _scan(tmp_path: Path, policies: list[Policy], files: dict[str, str]) -> Found:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    report = run_scan([tmp_path], policies)
    assert report.errors == []
    return where(report)


INTEGRATIONS = "rest-deprecated-integrations"


def test_helpers_around_http_clients_and_helpers_of_helpers(tmp_path: Path, policies: list[Policy]) -> None:
    script = (
        "#!/bin/bash\n"
        'api() { curl --silent --header "PRIVATE-TOKEN: $TOKEN" "$@"; }\n'
        'api --request PUT "$GITLAB_URL/api/v4/projects/$ID/integrations/slack" --data "webhook=$HOOK"\n'
        'gl() { glab api "$@"; }\n'
        "gl --method PUT projects/1/integrations/slack -f webhook=x\n"
        'w() { wget -q -O- --header "PRIVATE-TOKEN: $T" "$@"; }\n'
        'w --method=DELETE "$CI_API_V4_URL/projects/1/services/slack"\n'
        'h() { http --ignore-stdin "$@" "PRIVATE-TOKEN:$T"; }\n'
        'h PUT "$CI_API_V4_URL/projects/1/integrations/zentao" url=x\n'
        'get() { api --request GET "$@"; }\n'  # a helper of a helper
        'get "$GITLAB_URL/api/v4/geo_nodes/1"\n'
        "call() {\n"  # a method and a path as arguments, `shift`, a local variable
        '  local method=$1; shift\n'
        '  curl -sS -X "$method" -H "PRIVATE-TOKEN: $T" "$GITLAB_URL/api/v4/$1"\n'
        "}\n"
        "call PUT projects/7/services/slack\n"
    )
    assert _scan(tmp_path, policies, {"admin.sh": script}) == {
        (INTEGRATIONS, "admin.sh", 3, 38),
        (INTEGRATIONS, "admin.sh", 5, 17),
        (INTEGRATIONS, "admin.sh", 7, 34),
        ("rest-zentao-integration", "admin.sh", 9, 22),
        ("rest-geo-nodes", "admin.sh", 11, 24),
        (INTEGRATIONS, "admin.sh", 16, 10),  # at the argument: the call is the usage to change
    }


def test_variables_that_hold_a_url_with_its_path(tmp_path: Path, policies: list[Policy]) -> None:
    script = (
        "URL=https://gitlab.example.com\n"
        "API=$URL/api/v4/projects/1\n"
        'curl -X POST --header "PRIVATE-TOKEN: $T" "$API/managed_licenses" --data "name=MIT"\n'
        'export BASE="${GITLAB_URL:-https://gitlab.example.com}/api/v4"\n'
        'curl --request PUT "${BASE}/projects/2/services/slack"\n'
        "drop() {\n"
        "  local p=projects/3/integrations/slack\n"
        '  readonly U="${BASE%/}/$p"\n'
        '  curl -X DELETE "$U"\n'
        "}\n"
        'ROOT="${CI_API_V4_URL:?}"\n'
        'declare -x GEO="$ROOT/geo_nodes"\n'
        'curl "$GEO/2/repair"\n'
    )
    assert _scan(tmp_path, policies, {"vars.sh": script}) == {
        ("rest-managed-licenses", "vars.sh", 3, 44),  # at `$API`, where the path begins
        (INTEGRATIONS, "vars.sh", 5, 28),
        (INTEGRATIONS, "vars.sh", 9, 19),
        ("rest-geo-nodes", "vars.sh", 13, 7),
    }


def test_commands_run_remotely_or_nested(tmp_path: Path, policies: list[Policy]) -> None:
    script = (
        "ssh root@geo 'gitlab-ctl promote-db'\n"
        "kubectl exec -n gitlab deploy/toolbox -- gitlab-rake gitlab:import:repos[/var/opt]\n"
        "docker exec -it gitlab gitlab-rake gitlab:list_repos\n"
        "sudo -u git -H bundle exec rake gitlab:import:repos RAILS_ENV=production\n"
        "sudo -i gitlab-ctl promote-to-primary-node\n"
        "bash -c 'gitlab-runner exec docker test'\n"
        'sh -c "gitlab-rake geo:db:migrate"\n'
        'su - git -c "gitlab-rake gitlab:list_repos"\n'
        "ssh geo-secondary <<'END'\n"
        "gitlab-ctl promote-db\n"
        "END\n"
        "cat <<END\n"  # data, not commands
        "gitlab-ctl promote-db is what the old runbook said\n"
        "END\n"
        "sudo -u git -H bash <<EOF\n"
        "  cd /home/git/gitlab && bundle exec rake gitlab:import:repos\n"
        "EOF\n"
        'VERSION=$(gitlab-rake gitlab:list_repos | wc -l)\n'
        "eval \"gitlab-ctl promote-db\"\n"
        "if gitlab-ctl status; then gitlab-ctl promote-db; fi\n"
    )
    assert _scan(tmp_path, policies, {"geo.sh": script}) == {
        ("gitlab-ctl-promote-commands", "geo.sh", 1, 26),
        ("gitlab-rake-import-repos", "geo.sh", 2, 54),
        ("gitlab-rake-list-repos", "geo.sh", 3, 36),
        ("gitlab-rake-import-repos", "geo.sh", 4, 33),
        ("gitlab-ctl-promote-commands", "geo.sh", 5, 20),
        ("gitlab-runner-exec", "geo.sh", 6, 24),
        ("gitlab-rake-geo-db-tasks", "geo.sh", 7, 20),
        ("gitlab-rake-list-repos", "geo.sh", 8, 26),
        ("gitlab-ctl-promote-commands", "geo.sh", 10, 12),
        ("gitlab-rake-import-repos", "geo.sh", 16, 43),
        ("gitlab-rake-list-repos", "geo.sh", 18, 23),
        ("gitlab-ctl-promote-commands", "geo.sh", 19, 18),
        ("gitlab-ctl-promote-commands", "geo.sh", 20, 39),
    }


def test_helpers_around_gitlab_commands(tmp_path: Path, policies: list[Policy]) -> None:
    script = (
        'ctl() { sudo gitlab-ctl "$@"; }\n'
        "ctl promote-db\n"
        'rake_task() { sudo -u git -H bundle exec rake "$1" RAILS_ENV=production; }\n'
        "rake_task gitlab:import:repos\n"
        'runner() { docker run --rm gitlab/gitlab-runner "$@"; }\n'
        'runner register --registration-token "$TOKEN"\n'
        "function geo_ctl {\n"
        '  ctl "$@"\n'
        "}\n"
        "geo_ctl promote-to-primary-node\n"
    )
    assert _scan(tmp_path, policies, {"ops.sh": script}) == {
        ("gitlab-ctl-promote-commands", "ops.sh", 2, 5),
        ("gitlab-rake-import-repos", "ops.sh", 4, 11),
        ("runner-registration-token", "ops.sh", 6, 17),
        ("gitlab-ctl-promote-commands", "ops.sh", 10, 9),
    }


def test_a_ci_job_calls_the_helpers_its_before_script_defines(tmp_path: Path, policies: list[Policy]) -> None:
    ci = (
        "variables:\n"
        '  GL_API: "$CI_SERVER_URL/api/v4/projects/$CI_PROJECT_ID"\n'
        "promote:\n"
        "  before_script:\n"
        '    - ctl() { sudo gitlab-ctl "$@"; }\n'
        "    - 'api() { curl --header \"PRIVATE-TOKEN: $T\" \"$@\"; }'\n"
        "  script:\n"
        "    - ctl promote-db\n"
        '    - api --request PUT "$CI_API_V4_URL/projects/$CI_PROJECT_ID/integrations/slack"\n'
        "    - |\n"
        "      ssh geo <<EOF\n"
        "      gitlab-rake geo:db:migrate\n"
        "      EOF\n"
        "licenses:\n"
        "  script:\n"
        '    - curl -X POST "$GL_API/managed_licenses"\n'
        "    - ctl promote-db\n"  # no helper of that name in this job
    )
    assert _scan(tmp_path, policies, {".gitlab-ci.yml": ci}) == {
        ("gitlab-ctl-promote-commands", ".gitlab-ci.yml", 8, 11),
        (INTEGRATIONS, ".gitlab-ci.yml", 9, 40),
        ("gitlab-rake-geo-db-tasks", ".gitlab-ci.yml", 12, 19),
        ("rest-managed-licenses", ".gitlab-ci.yml", 16, 21),
    }


def test_near_misses_are_not_calls_or_commands(tmp_path: Path, policies: list[Policy]) -> None:
    script = (
        "#!/bin/bash\n"
        'say() { echo "$@"; }\n'  # a helper around something else
        'say --request PUT "$GITLAB_URL/api/v4/projects/1/integrations/slack"\n'
        'curl -X POST "$API/managed_licenses"\n'  # nothing says what API holds
        "OTHER=https://example.com/v1/projects/1\n"
        'curl -X POST "$OTHER/managed_licenses"\n'
        "BASE=$URL/api/v4/projects/1\n"
        "BASE=https://other.example/v2\n"  # reassigned before use
        'curl -X POST "$BASE/managed_licenses"\n'
        "cat <<EOF > runbook.txt\n"
        "gitlab-ctl promote-db\n"
        "EOF\n"
        "echo 'ssh root@geo gitlab-ctl promote-db'\n"
        "grep gitlab-ctl promote-db notes.md\n"
        "ssh host 'echo gitlab-ctl promote-db'\n"
        "docker exec gitlab echo gitlab-rake gitlab:list_repos\n"
        'ctl() { echo gitlab-ctl "$@"; }\n'
        "ctl promote-db\n"
        "python3 -c 'print(\"gitlab-ctl promote-db\")'\n"
        'logger "curl -X PUT $CI_API_V4_URL/projects/1/integrations/slack"\n'
        'CURL="curl -X PUT $CI_API_V4_URL/projects/1/integrations/slack"\n'
        "# api --request PUT \"$CI_API_V4_URL/projects/1/integrations/slack\"\n"
    )
    assert _scan(tmp_path, policies, {"near.sh": script}) == set()
