"""Discovery never stops and never hangs (issue 13): FIFOs, devices, sockets, unreadable files and
folders, symlink loops, over-long and undecodable names are skipped and reported as input errors
(line null) or as errors on the including line; the rest of the scan goes on. Include and exclude
globs match in linear time. Cases that used to hang run in a subprocess with a 20 s bound.
"""

from __future__ import annotations

import json
import os
import random
import re
import socket
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scanner.core.results import InputError, Report
from scanner.core.versions import Version
from scanner.engine.globs import Glob
from scanner.engine.scan import ScanOptions, scan
from scanner.rules.policy import Policy

from conftest import ROOT, sunset, where

TERRAFORM = "include:\n  - template: Terraform.gitlab-ci.yml\n"
FOUND = ("terraform-templates", ".gitlab-ci.yml", 2, 15)
TIMEOUT = 20
# What a FIFO or a device could make wait runs as a process with a time limit, never in the test's own.
HANG_GUARD: dict[str, Any] = {"process": True, "cwd": ROOT, "timeout": TIMEOUT}


def scan_json(repo: Path, *args: str) -> dict:  # type: ignore[type-arg]
    result = sunset("scan", str(repo), "--format", "json", "--fail-on", "never", *args, **HANG_GUARD)
    assert result.stderr == ""
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def errors(report: dict) -> list[tuple[str, int | None, str]]:  # type: ignore[type-arg]
    return [(e["path"], e["line"], e["message"]) for e in report["errors"]]


def found(report: dict) -> set[tuple[str, str, int, int]]:  # type: ignore[type-arg]
    return {(f["rule_id"], f["path"], f["line"], f["column"]) for f in report["findings"]}


def run(root: Path | list[Path], policies: list[Policy]) -> Report:
    return scan(root if isinstance(root, list) else [root], policies, ScanOptions(Version.parse("19.0")))


def fifo_message() -> str:
    return "not a regular file (a FIFO); not scanned"


def test_fifos_devices_and_sockets_are_reported_not_read(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    (repo / "sub").mkdir(parents=True)
    (repo / "ci").mkdir()
    (repo / ".gitlab-ci.yml").write_text(TERRAFORM + "  - local: ci/*.yml\n", encoding="utf-8")
    (repo / "ci" / "jobs.yml").write_text("job:\n  script: [make]\n", encoding="utf-8")
    for name in ("x.sh", "sub/.gitlab-ci.yml", "noext", "ci/pipe.yml"):
        os.mkfifo(repo / name)
    os.symlink("x.sh", repo / "link.sh")  # a symlink inside the repository to a FIFO
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(repo / "sock.sh"))
        expected = [
            (".gitlab-ci.yml", 3, f"local include `ci/*.yml` matches `ci/pipe.yml`: {fifo_message()}"),
            ("ci/pipe.yml", None, fifo_message()),
            ("link.sh", None, fifo_message()),
            ("noext", None, fifo_message()),
            ("sock.sh", None, "not a regular file (a socket); not scanned"),
            ("sub/.gitlab-ci.yml", None, fifo_message()),
            ("x.sh", None, fifo_message()),
        ]
        try:  # a character device inside the repository: /dev/zero would be read without end
            os.mknod(repo / "zero.sh", stat.S_IFCHR | 0o666, os.makedev(1, 5))
            expected.append(("zero.sh", None, "not a regular file (a character device); not scanned"))
        except PermissionError:
            pass  # not allowed to make devices here: the FIFOs and the socket still cover the case
        report = scan_json(repo)
    assert errors(report) == expected
    assert FOUND in found(report)
    named = scan_json(repo / "x.sh")
    assert errors(named) == [("x.sh", None, fifo_message())]


def test_a_symlink_to_a_device_is_not_read(tmp_path: Path) -> None:
    (tmp_path / ".gitlab-ci.yml").write_text(TERRAFORM, encoding="utf-8")
    os.symlink("/dev/zero", tmp_path / "zero.sh")
    os.symlink("/dev/zero", tmp_path / "zero.gitlab-ci.yml")
    report = scan_json(tmp_path)
    device = "not a regular file (a character device); not scanned"
    assert errors(report) == [("zero.gitlab-ci.yml", None, device), ("zero.sh", None, device)]
    assert FOUND in found(report)


@pytest.fixture
def unprivileged(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Root reads files and lists folders whatever their mode: as root, make `os.access` and
    `os.scandir` answer for paths of mode 000 as the kernel does for anyone else."""
    if os.geteuid() == 0:
        access, scandir = os.access, os.scandir

        def denied(path: object) -> bool:
            try:
                return stat.S_IMODE(os.stat(path).st_mode) == 0  # type: ignore[arg-type]
            except (OSError, TypeError, ValueError):
                return False

        def fake_access(path: object, mode: int, *args: object, **kwargs: object) -> bool:
            return False if denied(path) and mode & os.R_OK else access(path, mode, *args, **kwargs)  # type: ignore

        def fake_scandir(path: object = ".") -> object:
            if denied(path):
                raise PermissionError(13, "Permission denied", str(path))
            return scandir(path)  # type: ignore[type-var]

        monkeypatch.setattr(os, "access", fake_access)
        monkeypatch.setattr(os, "scandir", fake_scandir)
    yield


def test_unreadable_files_and_folders_are_reported(tmp_path: Path, policies: list[Policy], unprivileged: None) -> None:
    (tmp_path / ".gitlab-ci.yml").write_text(TERRAFORM, encoding="utf-8")
    (tmp_path / "closed").mkdir()
    (tmp_path / "closed" / ".gitlab-ci.yml").write_text(TERRAFORM, encoding="utf-8")
    (tmp_path / "secret").write_text("#!/bin/sh\ncurl $CI_API_V4_URL/runners\n", encoding="utf-8")
    (tmp_path / "deploy.sh").write_text("#!/bin/sh\necho hi\n", encoding="utf-8")
    try:
        for name in ("secret", "deploy.sh", "closed"):
            (tmp_path / name).chmod(0)
        report = run(tmp_path, policies)
    finally:
        for name in ("secret", "deploy.sh", "closed"):
            (tmp_path / name).chmod(0o755)
    assert report.errors == [
        InputError("closed", None, "cannot read folder: Permission denied; not scanned"),
        InputError("deploy.sh", None, "cannot read file: Permission denied; not scanned"),
        InputError("secret", None, "cannot read file: Permission denied; not scanned"),
    ]
    assert FOUND in where(report)


def test_symlink_loops_and_overlong_include_paths(tmp_path: Path, policies: list[Policy]) -> None:
    long = "a" * 5000 + ".yml"
    (tmp_path / ".gitlab-ci.yml").write_text(
        TERRAFORM + "  - local: a.gitlab-ci.yml\n" + f"  - local: {long}\n", encoding="utf-8")
    os.symlink("b.gitlab-ci.yml", tmp_path / "a.gitlab-ci.yml")
    os.symlink("a.gitlab-ci.yml", tmp_path / "b.gitlab-ci.yml")
    report = run(tmp_path, policies)
    assert report.errors == [
        InputError(".gitlab-ci.yml", 3, "local include `a.gitlab-ci.yml` cannot be read: symlink loop"),
        InputError(".gitlab-ci.yml", 4, f"local include `{'a' * 60}…` cannot be read: path too long"),
        InputError("a.gitlab-ci.yml", None, "symlink loop; not scanned"),
        InputError("b.gitlab-ci.yml", None, "symlink loop; not scanned"),
    ]
    assert FOUND in where(report)
    named = run([tmp_path / "a.gitlab-ci.yml", tmp_path / ".gitlab-ci.yml"], policies)
    assert InputError("a.gitlab-ci.yml", None, "symlink loop; not scanned") in named.errors
    assert FOUND in where(named)


def _bytes_file(folder: Path, name: bytes, content: bytes) -> None:
    fd = os.open(os.fsencode(str(folder)) + b"/" + name, os.O_CREAT | os.O_WRONLY, 0o644)
    os.write(fd, content)
    os.close(fd)


def test_undecodable_file_names_are_shown_as_escapes(tmp_path: Path, policies: list[Policy]) -> None:
    (tmp_path / ".gitlab-ci.yml").write_text(
        TERRAFORM + '  - local: "ci/\\ud800x.yml"\n  - local: "../\\ud800x.yml"\n', encoding="utf-8")
    _bytes_file(tmp_path, b"bad\xfe.gitlab-ci.yml", TERRAFORM.encode())
    os.mkdir(os.fsencode(str(tmp_path)) + b"/sub\xff")
    _bytes_file(tmp_path, b"sub\xff/.gitlab-ci.yml", b"a: [\n")
    report = run(tmp_path, policies)
    assert [(e.path, e.line, e.message) for e in report.errors] == [
        (".gitlab-ci.yml", 3, "local include `ci/\\ud800x.yml` does not exist"),
        (".gitlab-ci.yml", 4, "include `../\\ud800x.yml` escapes the repository root"),
        ("sub\\xff/.gitlab-ci.yml", 2, report.errors[2].message),
    ]
    assert report.errors[2].message.startswith("invalid YAML")
    assert {FOUND, ("terraform-templates", "bad\\xfe.gitlab-ci.yml", 2, 15)} <= where(report)
    assert {i.target for i in report.includes} == {"Terraform.gitlab-ci.yml", "ci/\\ud800x.yml", "../\\ud800x.yml"}
    printed = scan_json(tmp_path)  # parses: no raw bytes, no lone surrogates
    assert [(e[0], e[1]) for e in errors(printed)] == [(e.path, e.line) for e in report.errors]
    assert {FOUND, ("terraform-templates", "bad\\xfe.gitlab-ci.yml", 2, 15)} <= found(printed)
    text = sunset("scan", str(tmp_path), "--fail-on", "never", "--color", "never", **HANG_GUARD)  # UTF-8, or it raises
    assert text.stderr == ""
    assert "bad\\xfe.gitlab-ci.yml:2:15" in text.stdout


STARS = "**a" * 30 + "**b.yml"


def test_include_and_exclude_globs_do_not_backtrack(tmp_path: Path) -> None:
    (tmp_path / ".gitlab-ci.yml").write_text(TERRAFORM + f'  - local: "{STARS}"\n', encoding="utf-8")
    (tmp_path / ("a" * 120 + ".yml")).write_text("job:\n  script: [make]\n", encoding="utf-8")
    (tmp_path / ".sunset.yml").write_text(f'exclude: ["{STARS}", "{"*a" * 30}*b.yml"]\n', encoding="utf-8")
    report = scan_json(tmp_path, "--config", str(tmp_path / ".sunset.yml"))
    assert errors(report) == [(".gitlab-ci.yml", 3, f"local include pattern `{STARS[:60]}…` matches no file")]
    assert FOUND in found(report)


def _reference(pattern: str) -> re.Pattern[str]:
    """The old translation (`*` within a folder, `**` across), fine for short inputs."""
    parts = re.split(r"(\*\*|\*)", pattern.lstrip("/"))
    return re.compile("".join(".*" if t == "**" else "[^/]*" if t == "*" else re.escape(t) for t in parts) + r"\Z")


def test_glob_matches_like_the_regex_translation() -> None:
    rng = random.Random(13)
    for _ in range(4000):
        pattern = "".join(rng.choice(["a", "b", "/", "*", "**", ".", "ab"]) for _ in range(rng.randint(0, 8)))
        path = "".join(rng.choice("ab/.") for _ in range(rng.randint(0, 10)))
        assert Glob(pattern).match(path) == bool(_reference(pattern).match(path)), (pattern, path)
    assert Glob("ci/**/*.yml").match("ci/a/b/c.yml") and not Glob("ci/*.yml").match("ci/a/c.yml")
    assert Glob("/vendor/**").match("vendor/x/y") and Glob("***.yml").match("a/b.yml")


def test_a_fifo_given_as_the_configuration_is_refused_not_waited_on(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".gitlab-ci.yml").write_text(TERRAFORM)
    os.mkfifo(repo / ".sunset.yml")
    result = sunset("scan", str(repo), "--config", str(repo / ".sunset.yml"), **HANG_GUARD)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == f"sunset: {repo / '.sunset.yml'}:1: cannot read: not a regular file (a FIFO)\n"
    walked = scan_json(repo)  # found by the walk: reported, never read
    assert (errors(walked), found(walked)) == ([(".sunset.yml", None, fifo_message())], {FOUND})
