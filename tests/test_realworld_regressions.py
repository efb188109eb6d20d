"""What the real-world check (docs/research/realworld-check.md) found wrong, each reproduced with a
fixture written here and asserted to exact positions."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _concise(folder: Path) -> list[str]:
    """`sunset scan FOLDER --format concise --target 20.0` in a child with a time limit: the shell
    bug below made a scan loop for ever, growing without bound."""
    done = subprocess.run([sys.executable, "-m", "scanner.cli", "scan", str(folder), "--format", "concise",
                           "--target", "20.0", "--color", "never"],
                          cwd=folder, capture_output=True, text=True, timeout=60, env={"PYTHONPATH": str(ROOT)})
    assert done.returncode in (0, 1), done.stderr[-500:]
    return done.stdout.splitlines()


def test_ampersand_redirections_and_pipe_ampersand_do_not_stop_the_scan(tmp_path: Path) -> None:
    """`&>/dev/null` and `|&` (seen in a public GitLab API script) made the shell tokenizer read an
    empty word at the same place for ever; `&>file` and `2>&1` are words, `|&` is a pipe."""
    (tmp_path / "register.sh").write_text(
        '#!/bin/sh\ncurl -s "$CI_API_V4_URL/version" &>/dev/null || :\n'
        'gitlab-runner register --registration-token "$TOKEN" |& tee register.log\n')
    (tmp_path / ".gitlab-ci.yml").write_text(
        'job:\n  script:\n    - curl -s "$URL" &>/dev/null\n    - echo "$CI_BUILD_REF" 2>&1 |& tee out.log\n')
    out = _concise(tmp_path)
    assert [line.split(" ", 2)[0:2] for line in out[:-1]] == [
        [".gitlab-ci.yml:4:13:", "error[ci-build-variables]"],
        ["register.sh:3:24:", "error[runner-registration-token]"],
    ]
    assert "0 input error(s)" in out[-1]


def test_shell_words_around_ampersands() -> None:
    from scanner.readers.shell import ScriptText, commands

    def words(text: str) -> list[list[str]]:
        return [[w.text for w in c] for c in commands(ScriptText(text, ((1, 1),)))]

    assert words("curl -X DELETE &>/dev/null || :") == [["curl", "-X", "DELETE", "&>/dev/null"], [":"]]
    assert words("a |& b") == [["a"], ["b"]]
    assert words("x 2>&1 | y") == [["x", "2>&1"], ["y"]]
    assert words("sleep 1 & wait") == [["sleep", "1"], ["wait"]]
    assert words("c <&3 &>>log") == [["c", "<&3", "&>>log"]]
