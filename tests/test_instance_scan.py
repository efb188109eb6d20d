"""`sunset scan --gitlab URL --group PATH` against the GitLab stand-in (tests/gitlab_standin.py), with
python-gitlab as the real client: nested groups, a shared template project, a component with versions,
an include cycle across projects, a private project (404), a forbidden one (403), an archived one,
pagination and rate limiting."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gitlab_standin import TOKEN, Instance, StandIn

from scanner.cli import main
from scanner.instance import components

CS = 'variables:\n  CS_DISABLE_DEPENDENCY_LIST: "true"\nbuild:\n  script: [make]\n'
LICENSE = "spec:\n  inputs: {}\n---\nlicense:\n  script: [scan]\n  artifacts:\n    reports:\n" \
          "      license_scanning: gl-license-scanning-report.json\n"


def acme() -> Instance:
    inst = Instance()
    inst.add("acme/platform/ci-templates", {
        "build.yml": CS + "# the shared build\n",
        "loop-a.yml": "include:\n  - project: acme/platform/ci-templates\n    file: loop-b.yml\n",
        "loop-b.yml": "include:\n  - project: acme/platform/ci-templates\n    file: /loop-a.yml\n",
    })
    inst.add("acme/platform/components", refs={
        "main": {}, "1.0.0": {"templates/scan.yml": "spec:\n  inputs: {}\n---\nold:\n  script: [x]\n"},
        "1.2.0": {"templates/scan.yml": LICENSE},
        "2.0.0": {"templates/scan/template.yml": "spec:\n  inputs: {}\n---\nscan:\n  script: [ok]\n"},
    }, releases=["1.0.0", "1.2.0", "2.0.0"])
    inst.add("acme/apps/web", {
        ".gitlab-ci.yml": (
            "include:\n"
            "  - project: acme/platform/ci-templates\n    file: build.yml\n"                          # 2-3
            "  - component: $CI_SERVER_FQDN/acme/platform/components/scan@1.2\n"                    # 4
            "  - local: ci/test.yml\n"                                                              # 5
            "  - template: Security/License-Scanning.gitlab-ci.yml\n"                               # 6
        ),
        "ci/test.yml": 'test:\n  variables:\n    DAST_USE_AJAX_SPIDER: "true"\n  script: [t]\n',
    })
    inst.add("acme/apps/api", {
        ".gitlab-ci.yml": (
            "include:\n"
            "  - project: acme/platform/ci-templates\n    file: build.yml\n"
            "  - project: acme/secret/vault\n    file: ci.yml\n"                                    # 4-5
            "  - component: HOST/acme/platform/components/scan@~latest\n"                           # 6
            "  - local: missing.yml\n"                                                              # 7
        ),
    })
    inst.add("acme/apps/sub/loop", {".gitlab-ci.yml": "include:\n  - project: acme/platform/ci-templates\n"
                                                      "    file: loop-a.yml\n"})
    inst.add("acme/apps/custom", {"ci/main.yml": CS}, ci_config_path="ci/main.yml")
    inst.add("acme/apps/nothing", {"README.md": "hi\n"})
    inst.add("acme/apps/old", {".gitlab-ci.yml": CS}, archived=True)
    inst.add("acme/apps/locked", {".gitlab-ci.yml": "include:\n  - project: acme/platform/forbidden\n"
                                                    "    file: x.yml\n    ref: main\n"})
    inst.add("acme/platform/forbidden", {"x.yml": CS}, forbidden=True)
    inst.add("acme/secret/vault", {"ci.yml": CS}, private=True)
    inst.add("other/outside", {".gitlab-ci.yml": CS})
    return inst


@pytest.fixture
def gitlab(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Instance, str]]:
    monkeypatch.setenv("SUNSET_GITLAB_TOKEN", TOKEN)
    monkeypatch.delenv("CI_JOB_TOKEN", raising=False)
    inst = acme()
    with StandIn(inst) as url:
        host = url.split("://")[1]
        web = inst.project("acme/apps/api")
        assert web is not None
        web.files["main"][".gitlab-ci.yml"] = web.files["main"][".gitlab-ci.yml"].replace("HOST", host)
        yield inst, url


def scan(url: str, tmp: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, dict[str, Any]]:
    code = main(["scan", "--gitlab", url, "--group", "acme", "--format", "json", "--target", "18.0",
                 "--cache-dir", str(tmp / "cache"), *extra])
    return code, json.loads(capsys.readouterr().out)


def found(report: dict[str, Any]) -> list[tuple[str, str, int, int]]:
    return [(f["rule_id"], f["path"], f["line"], f["column"]) for f in report["findings"]]


def errors(report: dict[str, Any]) -> list[tuple[str, int | None, str]]:
    return [(e["path"], e["line"], e["message"]) for e in report["errors"]]


EXPECTED_FINDINGS = [
    ("cs-disable-dependency-list", "acme/apps/custom@main:ci/main.yml", 2, 3),
    ("license-scanning-templates", "acme/apps/web@main:.gitlab-ci.yml", 6, 15),
    ("dast-proxy-based-variables", "acme/apps/web@main:ci/test.yml", 3, 5),
    ("cs-disable-dependency-list", "acme/platform/ci-templates@main:build.yml", 2, 3),
    ("license-scanning-report-artifact", "acme/platform/components@1.2.0:templates/scan.yml", 8, 7),
]


def test_a_group_scanned_through_the_api(gitlab: tuple[Instance, str], tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    inst, url = gitlab
    code, report = scan(url, tmp_path, capsys)
    assert code == 1
    assert found(report) == EXPECTED_FINDINGS
    assert errors(report) == [
        ("acme/apps/api@main:.gitlab-ci.yml", 5, "include: project `acme/secret/vault`: 404 Not Found (or no access)"),
        ("acme/apps/api@main:.gitlab-ci.yml", 7, "include: `missing.yml` in `acme/apps/api`@main: "
         "404 Not Found (or no access)"),
        ("acme/apps/locked@main:.gitlab-ci.yml", 3,
         "include: `x.yml` in `acme/platform/forbidden`@main: 403 Forbidden"),
        ("acme/platform/ci-templates@main:loop-b.yml", 3, "include cycle: acme/platform/ci-templates@main:loop-a.yml"
         " → acme/platform/ci-templates@main:loop-b.yml → acme/platform/ci-templates@main:loop-a.yml"),
        ("acme/platform/forbidden", None, "CI/CD configuration acme/platform/forbidden@main:.gitlab-ci.yml: "
         "`.gitlab-ci.yml` in `acme/platform/forbidden`@main: 403 Forbidden"),
    ]
    projects = {p["project"]: (p["status"], p["root"]) for p in report["projects"]}
    assert projects == {
        "acme/apps/api": ("scanned", "acme/apps/api@main:.gitlab-ci.yml"),
        "acme/apps/custom": ("scanned", "acme/apps/custom@main:ci/main.yml"),
        "acme/apps/locked": ("scanned", "acme/apps/locked@main:.gitlab-ci.yml"),
        "acme/apps/nothing": ("no CI/CD configuration", "acme/apps/nothing@main:.gitlab-ci.yml"),
        "acme/apps/sub/loop": ("scanned", "acme/apps/sub/loop@main:.gitlab-ci.yml"),
        "acme/apps/web": ("scanned", "acme/apps/web@main:.gitlab-ci.yml"),
        "acme/platform/ci-templates": ("no CI/CD configuration", "acme/platform/ci-templates@main:.gitlab-ci.yml"),
        "acme/platform/components": ("no CI/CD configuration", "acme/platform/components@main:.gitlab-ci.yml"),
        "acme/platform/forbidden": ("error", "acme/platform/forbidden@main:.gitlab-ci.yml"),
    }
    web = next(p for p in report["projects"] if p["project"] == "acme/apps/web")
    assert [(f["path"], f["how"], f["chain"]) for f in web["files"]] == [
        ("acme/apps/web@main:.gitlab-ci.yml", "root", []),
        ("acme/platform/ci-templates@main:build.yml", "project", ["acme/apps/web@main:.gitlab-ci.yml"]),
        ("acme/platform/components@1.2.0:templates/scan.yml", "component", ["acme/apps/web@main:.gitlab-ci.yml"]),
        ("acme/apps/web@main:ci/test.yml", "local", ["acme/apps/web@main:.gitlab-ci.yml"]),
    ]
    api = next(p for p in report["projects"] if p["project"] == "acme/apps/api")
    assert ("acme/platform/components@2.0.0:templates/scan/template.yml", "component") in [
        (f["path"], f["how"]) for f in api["files"]]


def test_a_shared_file_is_fetched_and_checked_once(gitlab: tuple[Instance, str], tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    inst, url = gitlab
    scan(url, tmp_path, capsys)
    build = "/api/v4/projects/acme/platform/ci-templates/repository/files/build.yml"
    # the first time: id and bytes in one request, once for all the projects including it
    assert (inst.count("GET", build), inst.count("HEAD", build)) == (1, 0)
    # a second run: sunset has seen the file, asks for its blob id only, and finds the bytes in the cache
    inst.log.clear()
    code, report = scan(url, tmp_path, capsys)
    assert found(report) == EXPECTED_FINDINGS
    assert [p for m, p in inst.log if m == "GET" and p.endswith("/raw")] == []  # (files that 404 are asked again)
    assert (inst.count("GET", build), inst.count("HEAD", build)) == (0, 1)
    # a changed file: its new blob id is not cached, so its bytes are fetched again
    templates = inst.project("acme/platform/ci-templates")
    assert templates is not None
    templates.files["main"]["build.yml"] += "# changed\n"
    inst.log.clear()
    scan(url, tmp_path, capsys)
    assert (inst.count("GET", build + "/raw"), inst.count("HEAD", build)) == (1, 1)


def test_archived_projects_only_when_asked(gitlab: tuple[Instance, str], tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    _, url = gitlab
    _, report = scan(url, tmp_path, capsys, "--include-archived")
    assert ("cs-disable-dependency-list", "acme/apps/old@main:.gitlab-ci.yml", 2, 3) in found(report)
    assert "acme/apps/old" in [p["project"] for p in report["projects"]]


@pytest.mark.slow
def test_pages_and_rate_limits(gitlab: tuple[Instance, str], tmp_path: Path,
                               capsys: pytest.CaptureFixture[str]) -> None:
    inst, url = gitlab
    inst.max_per_page = 3  # 9 projects: three pages, followed through the Link header
    inst.limit_every = 9  # every 9th request answers 429 with Retry-After: 1
    code, report = scan(url, tmp_path, capsys, "--concurrency", "3")
    assert found(report) == EXPECTED_FINDINGS
    assert len(report["projects"]) == 9
    assert inst.count("GET", "/api/v4/groups/acme/projects") >= 3


def test_ref_option_reads_every_project_at_that_ref(gitlab: tuple[Instance, str], tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    _, url = gitlab
    _, report = scan(url, tmp_path, capsys, "--ref", "release")
    assert report["findings"] == []
    assert {p["status"] for p in report["projects"]} == {"no CI/CD configuration", "error"}


def test_resume_from_the_journal(gitlab: tuple[Instance, str], tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    inst, url = gitlab
    state = tmp_path / "state.jsonl"
    _, first = scan(url, tmp_path, capsys, "--state", str(state))
    lines = state.read_text().splitlines()
    assert len(lines) == 9
    # interrupted after four projects, the last line cut in half
    state.write_text("\n".join(lines[:4]) + "\n" + lines[4][:40])
    inst.log.clear()
    _, resumed = scan(url, tmp_path, capsys, "--state", str(state))
    assert found(resumed) == found(first)
    assert errors(resumed) == errors(first)
    assert sorted(p["project"] for p in resumed["projects"]) == sorted(p["project"] for p in first["projects"])
    done = {json.loads(line)["project"]["project"] for line in lines[:4]}
    asked = {p.split("/repository/")[0].removeprefix("/api/v4/projects/") for _, p in inst.log if "/repository/" in p}
    included = {"acme/platform/ci-templates", "acme/platform/components", "acme/platform/forbidden"}
    assert not (done - included) & asked  # a finished project is not read again (unless another includes it)


def test_usage_errors(gitlab: tuple[Instance, str], tmp_path: Path, capsys: pytest.CaptureFixture[str],
                      monkeypatch: pytest.MonkeyPatch) -> None:
    _, url = gitlab
    assert main(["scan", "--gitlab", url, "--group", "nope", "--cache-dir", str(tmp_path)]) == 2
    # (endswith: `sunset comment --verbose`, tested elsewhere in this process, leaves urllib3 logging on)
    assert capsys.readouterr().err.endswith("sunset: --gitlab: group `nope`: 404 Not Found (or no access)\n")
    monkeypatch.setenv("SUNSET_GITLAB_TOKEN", "wrong")
    assert main(["scan", "--gitlab", url, "--group", "acme", "--cache-dir", str(tmp_path)]) == 2
    assert capsys.readouterr().err.endswith("sunset: --gitlab: group `acme`: 401 Unauthorized (check the token)\n")


def test_blast_radius_lists_each_shared_file_once_with_its_projects(
        gitlab: tuple[Instance, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, url = gitlab
    _, report = scan(url, tmp_path, capsys)
    assert report["shared_files"] == [{
        "path": "acme/platform/ci-templates@main:build.yml",
        "findings": 1,
        "policies": ["cs-disable-dependency-list"],
        "projects": [
            {"project": "acme/apps/api", "how": "project", "chain": ["acme/apps/api@main:.gitlab-ci.yml"]},
            {"project": "acme/apps/web", "how": "project", "chain": ["acme/apps/web@main:.gitlab-ci.yml"]},
        ],
    }]
    web = next(p for p in report["projects"] if p["project"] == "acme/apps/web")
    assert (web["findings"], web["policies"]) == (
        {"error": 3, "warning": 0, "info": 1},  # license_scanning removal canceled: info
        ["cs-disable-dependency-list", "dast-proxy-based-variables", "license-scanning-report-artifact",
         "license-scanning-templates"])


def edge(host: str) -> Instance:
    inst = Instance()
    inst.add("edge/templates", {"shared.yml": CS, "child.yml": CS})
    inst.add("edge/app", {
        "ci/a.yml": "a:\n  script: [a]\n", "ci/deep/b.yml": "b:\n  script: [b]\n", "ci/c.txt": "",
        ".gitlab-ci.yml": (
            "include:\n"
            f"  - remote: http://{host}/remote/common.yml\n"                                       # 2
            "  - component: other.example.com/acme/components/scan@1.0.0\n"                        # 3
            "  - local: ci/*.yml\n"                                                                 # 4
            "  - local: $CI_PROJECT_DIR/x.yml\n"                                                    # 5
            "child:\n"
            "  trigger:\n"
            "    include:\n"
            "      - project: edge/templates\n        file: child.yml\n"                           # 9-10
        ),
    })
    inst.add("edge/elsewhere", {}, ci_config_path="shared.yml@edge/templates")
    inst.remote["common.yml"] = 'variables:\n  DAST_USE_AJAX_SPIDER: "true"\n'
    return inst


@pytest.mark.parametrize("fetch_remote", [False, True])
def test_remote_components_elsewhere_wildcards_child_pipelines_and_config_in_another_project(
        fetch_remote: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SUNSET_GITLAB_TOKEN", TOKEN)
    server = StandIn(Instance())
    host = server.url.split("://")[1]
    server.instance = server.server.instance = edge(host)
    with server as url:
        code = main(["scan", "--gitlab", url, "--group", "edge", "--format", "json", "--target", "18.0",
                     "--cache-dir", str(tmp_path), *(["--fetch-remote"] if fetch_remote else [])])
        report = json.loads(capsys.readouterr().out)
    remote = f"http://{host}/remote/common.yml"
    assert found(report) == [
        ("cs-disable-dependency-list", "edge/templates@main:child.yml", 2, 3),
        ("cs-disable-dependency-list", "edge/templates@main:shared.yml", 2, 3),
    ] + ([("dast-proxy-based-variables", remote, 2, 3)] if fetch_remote else [])
    assert errors(report) == []
    includes = [(i["from"], i["line"], i["kind"], i["resolved"], i.get("note", "")) for i in report["includes"]]
    assert includes == [
        ("edge/app@main:.gitlab-ci.yml", 2, "remote", fetch_remote, "" if fetch_remote else
         "not fetched (--fetch-remote)"),
        ("edge/app@main:.gitlab-ci.yml", 3, "component", False,
         "component on another instance (other.example.com); not fetched"),
        ("edge/app@main:.gitlab-ci.yml", 4, "local", True, ""),
        ("edge/app@main:.gitlab-ci.yml", 5, "local", False, "path uses CI/CD variables; not resolved"),
        ("edge/app@main:.gitlab-ci.yml", 10, "project", True, "child pipeline (trigger:include)"),
    ]
    projects = {p["project"]: (p["root"], [(f["path"], f["how"], f["chain"]) for f in p["files"]])
                for p in report["projects"]}
    assert projects["edge/elsewhere"] == ("edge/templates@main:shared.yml",
                                          [("edge/templates@main:shared.yml", "root", [])])
    assert projects["edge/app"][1][-1] == ("edge/templates@main:child.yml", "project", [])
    assert ("edge/app@main:ci/a.yml", "local", ["edge/app@main:.gitlab-ci.yml"]) in projects["edge/app"][1]
    assert "edge/app@main:ci/deep/b.yml" not in [f[0] for f in projects["edge/app"][1]]  # `*` stays in its folder
    assert code == 1


def test_retry_after_as_an_http_date(gitlab: tuple[Instance, str], tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    """GitLab may send `Retry-After` as an HTTP date; python-gitlab reads only seconds, so sunset turns
    the date into seconds before python-gitlab sees it (the scan neither crashes nor gives up)."""
    from email.utils import formatdate

    inst, url = gitlab
    inst.limit_every = 11
    inst.retry_after = formatdate(usegmt=True)  # now: retry at once
    _, report = scan(url, tmp_path, capsys)
    assert found(report) == EXPECTED_FINDINGS
    assert len(report["projects"]) == 9


def test_an_instance_that_does_not_answer(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SUNSET_GITLAB_TOKEN", TOKEN)
    with socket.socket() as held:  # the port stays ours, and nothing listens on it: the connection is refused
        held.bind(("127.0.0.1", 0))
        port = held.getsockname()[1]
        url = f"http://127.0.0.1:{port}"
        assert main(["scan", "--gitlab", url, "--group", "acme", "--cache-dir", str(tmp_path)]) == 2
    assert capsys.readouterr().err.endswith(f"sunset: --gitlab: cannot reach 127.0.0.1:{port}: connection refused "
                                            "(nothing listens on that port)\n")  # at once: test_instance_progress


def test_inside_a_ci_job_the_url_comes_from_ci_server_url(gitlab: tuple[Instance, str], tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    _, url = gitlab
    monkeypatch.setenv("CI_SERVER_URL", url)
    assert main(["scan", "--group", "acme", "--format", "json", "--target", "18.0",
                 "--cache-dir", str(tmp_path / "cache")]) == 1
    assert found(json.loads(capsys.readouterr().out)) == EXPECTED_FINDINGS
    monkeypatch.delenv("CI_SERVER_URL")
    assert main(["scan", "--group", "acme"]) == 2
    assert capsys.readouterr().err.endswith(
        "sunset: --group needs --gitlab URL (inside a GitLab CI job, CI_SERVER_URL is used)\n")


def test_the_rate_limit_gate() -> None:
    """`RateLimit-Remaining: 0` on an answer makes every thread wait for `RateLimit-Reset` (at most a
    minute at a time); a 429 is left to python-gitlab's retry; an HTTP-date `Retry-After` becomes seconds."""
    import time

    import requests

    from scanner.instance.api import MAX_PAUSE, _Gate

    def response(status: int, **headers: str) -> requests.Response:
        r = requests.Response()
        r.status_code = status
        r.headers.update({k.replace("_", "-"): v for k, v in headers.items()})
        return r

    gate = _Gate()
    now = time.time()
    gate.hook(response(200, RateLimit_Remaining="5", RateLimit_Reset=str(int(now) + 30)))
    assert gate.until == 0.0
    gate.hook(response(200, RateLimit_Remaining="0", RateLimit_Reset=str(int(now) + 30)))
    assert gate.until == int(now) + 30
    gate.hook(response(200, RateLimit_Remaining="0", RateLimit_Reset=str(int(now) + 3600)))
    assert now + MAX_PAUSE - 1 <= gate.until <= time.time() + MAX_PAUSE
    other = _Gate()
    other.hook(response(429, RateLimit_Remaining="0", RateLimit_Reset=str(int(now) + 30)))
    assert other.until == 0.0
    dated = response(429, Retry_After="Thu, 01 Jan 2099 00:00:00 GMT")
    other.hook(dated)
    assert dated.headers["Retry-After"] == str(int(MAX_PAUSE))
    past = response(429, Retry_After="Thu, 01 Jan 2004 00:00:00 GMT")
    other.hook(past)
    assert past.headers["Retry-After"] == "0"


def test_component_versions_as_gitlab_resolves_them(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """GitLab's `InstancePath`: the catalog version, then a released tag, then any ref of that name. `1.0`
    on a project with a tag `1.0` and no release reads the tag; `~latest` needs a catalog version."""
    monkeypatch.setenv("SUNSET_GITLAB_TOKEN", TOKEN)
    server = StandIn(Instance())
    host = server.url.split("://")[1]
    inst = server.instance = server.server.instance = Instance()
    inst.add("tools/scanners", refs={
        "main": {}, "1.0": {"templates/scan.yml": LICENSE}, "stable": {"templates/lint/template.yml": CS},
    })
    inst.add("tools/app", {".gitlab-ci.yml": (
        "include:\n"
        f"  - component: {host}/tools/scanners/scan@1.0\n"                                        # 2
        f"  - component: $CI_SERVER_FQDN/tools/scanners/lint@stable\n"                             # 3
        f"  - component: {host}/tools/scanners/scan@~latest\n"                                     # 4
        f"  - component: {host}/tools/scanners/scan@2\n"                                           # 5
        f"  - component: {host}/tools/scanners/none@stable\n"                                      # 6
        "  - template: License-Scanning.gitlab-ci.yml\n"                                           # 7
    )})
    with server as url:
        code = main(["scan", "--gitlab", url, "--group", "tools", "--format", "json", "--target", "18.0",
                     "--cache-dir", str(tmp_path)])
        report = json.loads(capsys.readouterr().out)
    assert code == 1
    assert found(report) == [
        ("license-scanning-templates", "tools/app@main:.gitlab-ci.yml", 7, 15),
        ("license-scanning-report-artifact", "tools/scanners@1.0:templates/scan.yml", 8, 7),
        ("cs-disable-dependency-list", "tools/scanners@stable:templates/lint/template.yml", 2, 3),
    ]
    # what follows the component's address (issue 27: the output layer may mask the address itself)
    said = [(path, line, message.startswith("component `") and message.split("`: ", 1)[1])
            for path, line, message in errors(report)]
    assert said == [
        ("tools/app@main:.gitlab-ci.yml", 4, "`~latest` needs a catalog version: `tools/scanners` has no release "
         "with a semantic version; use a tag, branch or commit SHA"),
        ("tools/app@main:.gitlab-ci.yml", 5, "no catalog version, release, tag, branch or commit `2` in "
         "tools/scanners"),
        ("tools/app@main:.gitlab-ci.yml", 6, "no templates/none.yml or templates/none/template.yml in "
         "tools/scanners@stable"),
    ]
    includes = [(i["line"], i["kind"], i["resolved"], i.get("note", "")) for i in report["includes"]]
    assert includes == [(2, "component", True, ""), (3, "component", True, ""), (4, "component", False, ""),
                        (5, "component", False, ""), (6, "component", False, ""),
                        (7, "template", False, "GitLab reads `Security/License-Scanning.gitlab-ci.yml`")]


@pytest.mark.parametrize(("tags", "version", "ref"), [
    (["1.0.0", "1.2.0", "1.10.1", "2.0.0"], "~latest", "2.0.0"),
    (["1.0.0", "1.2.0", "1.10.1", "2.0.0"], "1", "1.10.1"),  # numbers compare as numbers
    (["1.0.0", "1.2.0", "1.2.3", "2.0.0"], "1.2", "1.2.3"),
    (["v1.0.0", "1.0"], "1", "v1.0.0"),
    (["1.0", "beta"], "1.0", None),  # no semantic version: GitLab goes on to the tag or ref `1.0`
    ([], "~latest", None),
])
def test_the_catalog_version_a_short_version_selects(tags: list[str], version: str, ref: str | None) -> None:
    assert components.catalog_version(tags, version) == ref


@pytest.mark.parametrize(("target", "address"), [
    ("gitlab.example/a/b/scan@1.0", ("gitlab.example", "a/b", "scan", "1.0")),
    ("$CI_SERVER_FQDN/a/sub/b/scan@~latest", ("here.example:8080", "a/sub/b", "scan", "~latest")),
    ("${CI_SERVER_HOST}/a/b/scan@main", ("here.example:8080", "a/b", "scan", "main")),
    ("gitlab.example/a/b/scan@1@2", ("gitlab.example", "a/b", "scan", "1@2")),  # GitLab splits at the first @
    ("gitlab.example/b@1.0", None),  # no project
    ("gitlab.example/a/b/scan", None),  # no version
    ("gitlab.example//a/scan@1", None),
])
def test_component_addresses(target: str, address: tuple[str, str, str, str] | None) -> None:
    found = components.parse(target, "here.example:8080")
    assert (found and (found.host, found.project, found.name, found.version)) == address
