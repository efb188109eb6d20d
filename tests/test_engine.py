"""The scan over real files on disk: includes in every form, limits, bad input, each matcher kind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from scanner.core.results import IncludeRecord, InputError, Report
from scanner.core.versions import Version
from scanner.engine.scan import MAX_INCLUDE_DEPTH, ScanOptions, scan
from scanner.rules.catalog import load_policies
from scanner.rules.policy import Policy

from conftest import where

DATA = Path(__file__).parent / "data" / "policies"


@pytest.fixture(scope="module")
def test_policies() -> list[Policy]:
    return load_policies([DATA])


def write(root: Path, files: dict[str, str | bytes]) -> Path:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


def run(root: Path, policies: list[Policy], target: str = "19.0", **kw: int) -> Report:
    return scan([root], policies, ScanOptions(Version.parse(target), **kw))


def test_include_forms_are_followed_or_recorded(tmp_path: Path, test_policies: list[Policy]) -> None:
    write(
        tmp_path,
        {
            ".gitlab-ci.yml": (
                "include:\n"
                "  - ci/one.yml\n"
                "  - local: /ci/two.yml\n"
                "    rules:\n"
                "      - if: $CI_COMMIT_BRANCH\n"
                "  - template: Old.gitlab-ci.yml\n"
                "  - project: group/shared\n"
                "    ref: v1\n"
                "    file: [a.yml, /b.yml]\n"
                "  - remote: https://example.com/ci.yml\n"
                "  - component: $CI_SERVER_FQDN/group/comp/build@1.0\n"
                "    inputs:\n"
                "      OLD_VAR: x\n"
                "  - local: ci/$FLAVOUR.yml\n"
            ),
            "ci/one.yml": "one:\n  variables:\n    OLD_VAR: a\n  script: [echo]\n",
            "ci/two.yml": "include: ci/three.yml\n",
            "ci/three.yml": "three:\n  variables:\n    OLD_VAR: b\n  script: [echo]\n",
        },
    )
    report = run(tmp_path, test_policies)
    assert report.errors == []
    assert where(report) == {
        ("t-template", ".gitlab-ci.yml", 6, 15),
        ("t-variable", ".gitlab-ci.yml", 13, 7),
        ("t-variable", "ci/one.yml", 3, 5),
        ("t-variable", "ci/three.yml", 3, 5),
    }
    assert report.includes == [
        IncludeRecord(".gitlab-ci.yml", 2, "local", "ci/one.yml", True),
        IncludeRecord(".gitlab-ci.yml", 3, "local", "/ci/two.yml", True),
        IncludeRecord("ci/two.yml", 1, "local", "ci/three.yml", True),
        IncludeRecord(".gitlab-ci.yml", 6, "template", "Old.gitlab-ci.yml", False, "no CI/CD template of that name"),
        IncludeRecord(".gitlab-ci.yml", 9, "project", "group/shared:a.yml", False),
        IncludeRecord(".gitlab-ci.yml", 9, "project", "group/shared:/b.yml", False),
        IncludeRecord(".gitlab-ci.yml", 10, "remote", "https://example.com/ci.yml", False),
        IncludeRecord(
            ".gitlab-ci.yml",
            11,
            "component",
            "$CI_SERVER_FQDN/group/comp/build@1.0",
            False,
            "path uses CI/CD variables; not resolved",
        ),
        IncludeRecord(
            ".gitlab-ci.yml", 14, "local", "ci/$FLAVOUR.yml", False, "path uses CI/CD variables; not resolved"
        ),
    ]
    assert report.files_scanned == 4


def test_include_string_form_and_wildcards(tmp_path: Path, test_policies: list[Policy]) -> None:
    write(
        tmp_path,
        {
            ".gitlab-ci.yml": "include: 'ci/*.yml'\n",
            "ci/top.yml": "include:\n  - local: 'deep/**/*.yml'\n  - local: 'all/**.yml'\n",
            "ci/skip.txt": "include: nothing\n",
            "deep/top.yml": "variables:\n  OLD_VAR: not-reached\n",
            "deep/sub/inner.yml": "variables:\n  OLD_VAR: reached\n",
            "all/a.yml": "variables:\n  OLD_VAR: reached\n",
            "all/x/b.yml": "variables:\n  OLD_VAR: reached\n",
        },
    )
    report = run(tmp_path, test_policies)
    assert report.errors == []
    assert where(report) == {
        ("t-variable", "deep/sub/inner.yml", 2, 3),
        ("t-variable", "all/a.yml", 2, 3),
        ("t-variable", "all/x/b.yml", 2, 3),
    }


def test_file_reached_twice_is_scanned_and_reported_once(tmp_path: Path, test_policies: list[Policy]) -> None:
    write(
        tmp_path,
        {
            ".gitlab-ci.yml": "include: [ci/shared.yml, ci/other.yml]\n",
            "ci/other.yml": "include: ci/shared.yml\n",
            "ci/shared.yml": "variables:\n  OLD_VAR: x\n",
            # a `<name>.gitlab-ci.yml` in a folder starts at the repository root (here the scanned folder)
            "sub/deploy.gitlab-ci.yml": "include: ci/shared.yml\nvariables:\n  OLD_VAR: y\n",
            "sub/ci/shared.yml": "variables:\n  OLD_VAR: z\n",  # included by no one: not read
        },
    )
    report = run(tmp_path, test_policies)
    assert report.errors == []
    assert where(report) == {
        ("t-variable", "ci/shared.yml", 2, 3),
        ("t-variable", "sub/deploy.gitlab-ci.yml", 3, 3),
    }
    assert report.files_scanned == 4


def test_nested_git_repository_is_its_own_root(tmp_path: Path, test_policies: list[Policy]) -> None:
    write(
        tmp_path,
        {
            "a/.git/HEAD": "ref: refs/heads/main\n",
            "a/.gitlab-ci.yml": "include: ci/x.yml\n",
            "a/ci/x.yml": "variables:\n  OLD_VAR: 1\n",
            "b/.git/HEAD": "ref: refs/heads/main\n",
            "b/.gitlab-ci.yml": "include: ci/x.yml\n",
            "b/ci/x.yml": "variables:\n  OLD_VAR: 2\n",
        },
    )
    report = scan([tmp_path / "a", tmp_path / "b"], test_policies, ScanOptions(Version(19, 0)))
    assert report.errors == []
    assert where(report) == {("t-variable", "a/ci/x.yml", 2, 3), ("t-variable", "b/ci/x.yml", 2, 3)}


def test_cycle_is_an_error_and_the_rest_is_scanned(tmp_path: Path, test_policies: list[Policy]) -> None:
    write(
        tmp_path,
        {
            ".gitlab-ci.yml": "include: ci/a.yml\nvariables:\n  OLD_VAR: root\n",
            "ci/a.yml": "include: ci/b.yml\n",
            "ci/b.yml": "include:\n  - local: ci/a.yml\nvariables:\n  OLD_VAR: b\n",
        },
    )
    report = run(tmp_path, test_policies)
    assert report.errors == [InputError("ci/b.yml", 2, "include cycle: ci/a.yml → ci/b.yml → ci/a.yml")]
    assert where(report) == {("t-variable", ".gitlab-ci.yml", 3, 3), ("t-variable", "ci/b.yml", 4, 3)}


def test_escapes_are_errors(tmp_path: Path, test_policies: list[Policy]) -> None:
    outside = tmp_path / "outside.yml"
    outside.write_text("variables:\n  OLD_VAR: secret\n")
    repo = write(
        tmp_path / "repo",
        {
            ".gitlab-ci.yml": "include:\n  - local: ../outside.yml\n  - local: ci/link.yml\n  - local: /../../x.yml\n",
        },
    )
    (repo / "ci").mkdir()
    os.symlink(outside, repo / "ci" / "link.yml")
    report = run(repo, test_policies)
    assert report.errors == [
        InputError(".gitlab-ci.yml", 2, "include `../outside.yml` escapes the repository root"),
        InputError(".gitlab-ci.yml", 3, "include `ci/link.yml` escapes the repository root (symlink)"),
        InputError(".gitlab-ci.yml", 4, "include `/../../x.yml` escapes the repository root"),
    ]
    assert report.findings == []


def test_nesting_deeper_than_gitlab_allows(tmp_path: Path, test_policies: list[Policy]) -> None:
    files = {".gitlab-ci.yml": "include: ci/0.yml\n"}
    for i in range(MAX_INCLUDE_DEPTH + 3):
        files[f"ci/{i}.yml"] = f"include: ci/{i + 1}.yml\n"
    files[f"ci/{MAX_INCLUDE_DEPTH + 3}.yml"] = "variables:\n  OLD_VAR: deep\n"
    report = run(write(tmp_path, files), test_policies)
    limit = MAX_INCLUDE_DEPTH  # the root's include is level 1, so ci/99.yml's include is level 101
    assert report.errors == [
        InputError(f"ci/{limit - 1}.yml", 1, f"includes nested deeper than GitLab's limit of {limit}")
    ]


def test_bad_files_are_errors_and_lose_nothing(tmp_path: Path, test_policies: list[Policy]) -> None:
    bomb = (
        "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
        + "".join(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]\n" for i in range(1, 10))
        + "variables:\n  OLD_VAR: after-bomb\n"
    )
    write(
        tmp_path,
        {
            ".gitlab-ci.yml": "include: 'ci/*.yml'\nvariables:\n  OLD_VAR: root\n",
            "ci/broken.yml": "job:\n  script: [a\n  stage: b\n",
            "ci/binary.yml": b"\x00\x01\x02variables: {}\n",
            "ci/latin1.yml": "variables:\n  NAME: 'caf\xe9'\n".encode("latin-1"),
            "ci/empty.yml": "\n\n",
            "ci/huge.yml": "variables:\n" + "".join(f"  V{i}: x\n" for i in range(2000)),
            "ci/bomb.yml": bomb,
        },
    )
    report = run(tmp_path, test_policies, max_file_bytes=10_000)
    messages = {(e.path, e.line, e.message.split(";")[0].split(" (")[0]) for e in report.errors}
    assert messages == {
        ("ci/binary.yml", None, "binary file"),
        ("ci/broken.yml", 2, "invalid YAML: while parsing a flow sequence did not find expected ',' or ']'"),
        ("ci/empty.yml", None, "empty file"),
        ("ci/huge.yml", None, "file is 20901 bytes, over the 10000-byte limit"),
        ("ci/latin1.yml", 2, "not valid UTF-8"),
    }
    assert where(report) == {("t-variable", ".gitlab-ci.yml", 3, 3), ("t-variable", "ci/bomb.yml", 12, 3)}


def test_missing_paths_and_includes(tmp_path: Path, test_policies: list[Policy]) -> None:
    write(tmp_path, {".gitlab-ci.yml": "include:\n  - local: nope.yml\n  - local: 'none/*.yml'\n  - {}\n"})
    report = scan([tmp_path, tmp_path / "absent"], test_policies, ScanOptions(Version(19, 0)))
    assert report.errors == [
        InputError(".gitlab-ci.yml", 2, "local include `nope.yml` does not exist"),
        InputError(".gitlab-ci.yml", 3, "local include pattern `none/*.yml` matches no file"),
        InputError(".gitlab-ci.yml", 4, "unknown include form (no local/template/project/remote/component key)"),
        InputError("absent", None, "no such file or directory"),
    ]


def test_child_pipelines_from_trigger_include(tmp_path: Path, test_policies: list[Policy]) -> None:
    write(
        tmp_path,
        {
            ".gitlab-ci.yml": (
                "child:\n"
                "  trigger:\n"
                "    include: ci/child.yml\n"
                "generated:\n"
                "  trigger:\n"
                "    include:\n"
                "      - artifact: generated.yml\n"
                "        job: generate\n"
                "      - template: Old.gitlab-ci.yml\n"
            ),
            "ci/child.yml": "include: ci/part.yml\n",
            "ci/part.yml": "variables:\n  OLD_VAR: in-child\n",
        },
    )
    report = run(tmp_path, test_policies)
    assert report.errors == []
    assert where(report) == {("t-variable", "ci/part.yml", 2, 3), ("t-template", ".gitlab-ci.yml", 9, 19)}
    child = "child pipeline (trigger:include)"
    assert report.includes == [
        IncludeRecord(".gitlab-ci.yml", 3, "local", "ci/child.yml", True, child),
        IncludeRecord("ci/child.yml", 1, "local", "ci/part.yml", True),
        IncludeRecord(".gitlab-ci.yml", 7, "artifact", "generated.yml", False, child),
        IncludeRecord(".gitlab-ci.yml", 9, "template", "Old.gitlab-ci.yml", False,
                      child + "; no CI/CD template of that name"),
    ]


def test_shell_scripts_are_found_and_checked(tmp_path: Path, test_policies: list[Policy]) -> None:
    write(
        tmp_path,
        {
            "scripts/register.sh": (
                "#!/bin/sh\n"
                "# tool register --old-flag is how we used to do it\n"
                "export OLD_ENV=1\n"
                "tool register \\\n"
                '  --old-flag "$OLD_REF"\n'
            ),
            "bin/provision": (
                '#!/usr/bin/env bash\ncurl -H "JOB-TOKEN: $CI_JOB_TOKEN" "$CI_API_V4_URL/projects/42/jobs"\n'
            ),
            "bin/tool.py": "#!/usr/bin/env python3\nprint('tool register --old-flag')\n",
            "notes.txt": "tool register --old-flag\n",
        },
    )
    report = run(tmp_path, test_policies)
    assert report.errors == []
    assert where(report) == {
        ("t-command", "scripts/register.sh", 3, 8),
        ("t-command", "scripts/register.sh", 5, 3),
        ("t-reference", "scripts/register.sh", 5, 15),
        ("t-reach", "bin/provision", 2, 61),
    }
    assert report.files_scanned == 3  # bin/tool.py is read as Python source (no API use in it)


def test_shared_template_files_are_pipeline_roots(tmp_path: Path, test_policies: list[Policy]) -> None:
    write(
        tmp_path,
        {
            "templates/python.gitlab-ci.yml": "variables:\n  OLD_VAR: shared\n",
            "deploy/values.yml": "variables:\n  OLD_VAR: not a pipeline\n",
        },
    )
    report = run(tmp_path, test_policies)
    assert where(report) == {("t-variable", "templates/python.gitlab-ci.yml", 2, 3)}
