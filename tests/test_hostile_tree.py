"""Issue 27, "no traceback reaches a user": `sunset scan` run as a user runs it (the console script,
in its own process) on a tree of hostile files — binary files, an alias bomb, 50,000-line files,
invalid UTF-8, nesting far past every parser's limit, special files and symlinks, control characters
in names, every line end — says each problem in one line, reports the good file beside them, and
prints no traceback and no internal error. A file that vanishes between the listing and its reading,
and an error no check foresaw, are one line too.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from scanner.cli import main
from scanner.engine import scan as scan_engine

from conftest import sunset

JWT_JOB = 'job:\n  script: [echo "$CI_JOB_JWT"]\n'
GOOD = ("good/.gitlab-ci.yml", 2, 18)


def _bomb() -> str:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 10):
        prev, name = chr(ord("a") + i - 1), chr(ord("a") + i)
        lines.append(f"{name}: &{name} [{', '.join(['*' + prev] * 9)}]")
    return "\n".join(lines) + "\njob:\n  script: *j\n"


HOSTILE: dict[str, bytes] = {
    "binary/.gitlab-ci.yml": bytes(range(256)) * 64,
    "binary/gitlab.rb": b"\x00" * 10_000,
    "bomb/.gitlab-ci.yml": _bomb().encode(),
    "big/.gitlab-ci.yml": "".join(f"job{i}:\n  script: [echo $CI_JOB_JWT]\n" for i in range(25_000)).encode(),
    "big/long.sh": b"#!/bin/sh\ncat <<'EOF'\n" + b"gitlab-runner register --url x\n" * 50_000 + b"EOF\n",
    "big/one-line.yml": b"k: [" + b"a," * 500_000 + b"a]\n",
    "utf8/.gitlab-ci.yml": b"job:\n  script: [echo \xff\xfe\xc3\x28 \xed\xa0\x80]\n",
    "utf8/gitlab.rb": b"gitlab_rails['x'] = '\xff\xfe'\n",
    "utf8/config.toml": b"[[runners]]\n  token = \"\xc3\x28\"\n",
    "deep/.gitlab-ci.yml": b"x: " + b"[" * 100_000 + b"\n",
    "deep/blocks/.gitlab-ci.yml": "".join(" " * i + f"k{i}:\n" for i in range(1500)).encode(),
    "deep/config.toml": b'concurrent = 1\n[[runners]]\n  url = "x"\na = ' + b"[" * 50_000 + b"\n",
    "deep/gitlab.rb": b"gitlab_rails['x'] = " + b"{ 'a' => " * 20_000 + b"\n",
    "deep/x.py": b'import gitlab\nimport requests\nrequests.put(f"{API}/runners/1", data={"active": False})\n'
                 b"x = " + b"(" * 100_000,
    "deep/x.js": b"await fetch(`${process.env.CI_API_V4_URL}/runners/1`, {method: \"PUT\", body: JSON.stringify("
                 b"{active: false})});\nconst x = " + b"[" * 100_000 + b";\n",
    "deep/x.rb": b'HTTParty.put("#{ENV["CI_API_V4_URL"]}/runners/1", body: { active: false })\nx = ' + b"[" * 100_000,
    "deep/x.json": b'{"include": ' + b"[" * 100_000,
    "deep/q.graphql": b"query { " + b"a { " * 50_000 + b"\n",
    "deep/main.tf": b'resource "gitlab_runner" "x" {\n  registration_token = "x"\n}\na = ' + b"[" * 50_000 + b"\n",
    "deep/Dockerfile": b"FROM alpine\nRUN gitlab-runner register --url x --registration-token y\nRUN " + b"$(" * 50_000,
    "deep/docker-compose.yml": b"services:\n  gitlab:\n    image: gitlab/gitlab-ce\n    environment:\n"
                               b"      GITLAB_OMNIBUS_CONFIG: \"gitlab_rails['x'] = " + b"[" * 20_000 + b'"\n',
    "ends/.gitlab-ci.yml": b"job:\r  script: [echo \"$CI_JOB_JWT\"]\r\x0c\x0b\xc2\x85\xe2\x80\xa8",
    "ends/bom/.gitlab-ci.yml": b"\xef\xbb\xbf\xef\xbb\xbf" + JWT_JOB.encode(),
    "ends/utf16/.gitlab-ci.yml": JWT_JOB.encode("utf-16"),
    "names/\x1b[31mred\u202e/.gitlab-ci.yml": b"x: [\n",
    "empty/.gitlab-ci.yml": b"",
    "empty/gitlab.rb": b"",
    "ws/.gitlab-ci.yml": b"\n\n   \n\t\n",
    "docs/---.gitlab-ci.yml": b"---\n---\n...\n---\n",
    "tags/.gitlab-ci.yml": b"job: !reference [.a, !!python/object:os.system, b]\nx: !!binary AAAA\ny: !!int abc\n",
    "keys/.gitlab-ci.yml": b"? [a, b]\n: c\n? {x: y}\n: d\n<<: [*nope]\n",
}


@pytest.fixture()
def hostile(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "good").mkdir()
    (root / "good" / ".gitlab-ci.yml").write_text(JWT_JOB, encoding="utf-8")
    for name, data in HOSTILE.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    special = root / "special"
    special.mkdir()
    os.mkfifo(special / ".gitlab-ci.yml")
    (special / "loop").symlink_to(special / "loop")
    (special / "loop.gitlab-ci.yml").symlink_to(special / "loop.gitlab-ci.yml")
    (special / "zero").mkdir()
    (special / "zero" / ".gitlab-ci.yml").symlink_to("/dev/zero")
    (special / "out").mkdir()
    (special / "out" / "gitlab.rb").symlink_to("/etc/passwd")
    (special / "dangling").mkdir()
    (special / "dangling" / ".gitlab-ci.yml").symlink_to(special / "nowhere.yml")
    (special / "dir").mkdir()
    (special / "dir" / ".gitlab-ci.yml").mkdir()
    (special / "up").symlink_to("..")
    return root


def _said(text: str) -> list[str]:
    return [line for line in text.splitlines() if "Traceback" in line or "internal error" in line
            or line.startswith(("  File ", "RecursionError", "MemoryError"))]


FORMATS = ("json", "concise", "sarif", "codequality", "markdown", "html")


@pytest.mark.slow
def test_a_hostile_tree_is_said_in_lines_never_a_traceback(hostile: Path, tmp_path: Path) -> None:
    """One run, every format: colour text on stdout, the others in `--output` files."""
    outputs = [arg for fmt in FORMATS for arg in ("--output", f"{fmt}={tmp_path / ('report.' + fmt)}")]
    done = sunset("scan", ".", "--fail-on", "never", "--color", "always", *outputs, cwd=hostile, process=True,
                  timeout=600)
    assert done.returncode == 0, done.stderr
    written = {fmt: (tmp_path / f"report.{fmt}").read_text(encoding="utf-8") for fmt in FORMATS}
    for shown in (done.stderr, done.stdout, *written.values()):
        assert _said(shown) == []
    for fmt, shown in [("text", done.stdout), *written.items()]:  # JSON gives the names exactly, escaped as JSON
        assert fmt == "json" or "\x1b[31mred" not in shown and "\u202e" not in shown, fmt
    report = json.loads(written["json"])
    found = {(f["rule_id"], f["path"], f["line"], f["column"]) for f in report["findings"]}
    # the good file, and what the hostile files hold before their hostile part, are still reported
    assert {("ci-job-jwt-variables", *GOOD), ("rest-runner-active", "deep/x.js", 1, 93),
            ("runner-registration-token", "deep/Dockerfile", 2, 36)} <= found
    errors = {(e["path"], e["line"]) for e in report["errors"]}
    # each hostile file that is read as its kind is said, with its name and, where it has one, the line
    assert {("binary/.gitlab-ci.yml", None), ("utf8/.gitlab-ci.yml", 2), ("deep/.gitlab-ci.yml", 1),
            ("deep/config.toml", 4), ("deep/gitlab.rb", 1), ("deep/x.py", 4), ("deep/q.graphql", 1),
            ("deep/docker-compose.yml", 5), ("special/.gitlab-ci.yml", None), ("special/zero/.gitlab-ci.yml", None),
            ("special/out/gitlab.rb", None), ("special/loop.gitlab-ci.yml", None)} <= errors
    assert not [e for e in report["errors"] if "internal error" in e["message"]]


def test_a_file_that_vanishes_between_listing_and_reading(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """Discovery lists the file; it is deleted just before sunset reads it (the read is the real one)."""
    root = tmp_path / "repo"
    (root / "a").mkdir(parents=True)
    (root / "b").mkdir()
    (root / "a" / ".gitlab-ci.yml").write_text(JWT_JOB, encoding="utf-8")
    (root / "b" / ".gitlab-ci.yml").write_text(JWT_JOB, encoding="utf-8")
    real_read = scan_engine.read_text
    gone = root / "b" / ".gitlab-ci.yml"

    def vanishing(real: Path, repo_real: Path, *args: int) -> object:
        if real == gone.resolve() and gone.exists():
            gone.unlink()
        return real_read(real, repo_real, *args)

    monkeypatch.setattr(scan_engine, "read_text", vanishing)
    assert main(["scan", str(root), "--format", "json", "--fail-on", "never"]) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert [(f["rule_id"], f["path"], f["line"]) for f in report["findings"]] == [
        ("ci-job-jwt-variables", "a/.gitlab-ci.yml", 2)]
    assert [(e["path"], e["message"]) for e in report["errors"]] == [
        ("b/.gitlab-ci.yml", "file does not exist")]
    assert captured.err == ""


@pytest.mark.parametrize(("argv", "said"), [
    (["policies", "docs", "--out", "/dev/null/docs"], "sunset: /dev/null/docs: Not a directory\n"),
    (["scan", "--gitlab", "http://127.0.0.1:9", "--group", "g", "--state", "/dev/null/state"],
     "sunset: /dev/null/state: Not a directory\n"),
])
def test_an_os_error_no_check_foresaw_is_one_line(tmp_path: Path, argv: list[str], said: str,
                                                   capsys: pytest.CaptureFixture[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SUNSET_GITLAB_TOKEN", "glpat-not-used-here-000")
    assert main(argv) == 2
    assert capsys.readouterr().err == said


def test_a_bug_is_one_line_naming_where(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    """An exception sunset did not expect outside any one file (here: the report's renderer fails) is
    one line: an internal error, its type and message and the place in sunset's code, exit 2."""
    from scanner.commands import scan as scan_command

    def broken(*_: object) -> str:
        raise ValueError("renderer broke")

    monkeypatch.setattr(scan_command, "render", broken)
    (tmp_path / ".gitlab-ci.yml").write_text(JWT_JOB, encoding="utf-8")
    assert main(["scan", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("sunset: internal error (a bug in sunset; please report it): ValueError: renderer broke (at ")
    assert err.endswith(".py:" + err.rsplit(".py:", 1)[1]) and err.count("\n") == 1
