"""`sunset completion bash|zsh|fish`, tried as a user does: the script loaded into the real shell and
asked to complete what a user types (bash: the completion function with COMP_WORDS; zsh: the same
through bashcompinit; fish: `complete -C`). Everything it offers comes from sunset's own parser."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from scanner.cli import build_parser, main
from scanner.report.formats import FORMATS

CASES = [  # what the user typed (the last word is being completed), what the shell must offer
    (["sc"], ["scan"]),
    (["scan", "--fo"], ["--format"]),
    (["scan", "--format", ""], sorted(FORMATS)),
    (["scan", "--fail-on", "w"], ["warning"]),
    (["scan", "--show-"], ["--show-files", "--show-settings"]),
    (["policies", ""], ["check", "docs", "list", "show"]),
    (["policies", "list", "--format", ""], ["json", "text"]),
    (["fix", "--t"], ["--target"]),
    (["completion", ""], ["bash", "fish", "zsh"]),
    (["scan", "READ"], ["README.md"]),  # a path
]


def script(shell: str, tmp: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    capsys.readouterr()
    assert main(["completion", shell]) == 0
    path = tmp / f"sunset.{shell}"
    path.write_text(capsys.readouterr().out, encoding="utf-8")
    return path


def shell_or_fail(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: run `bash .ci/setup` (it installs it with apt-get)")
    return found


BASH_ASK = """source {script}
COMP_WORDS=(sunset {words}); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)); COMPREPLY=()
_sunset
printf '%s\\n' "${{COMPREPLY[@]}}" | sort
"""


def ask_bash(shell: str, path: Path, typed: list[str], cwd: Path) -> list[str]:
    words = " ".join(f"'{w}'" for w in typed)
    code = BASH_ASK.format(script=path, words=words)
    if shell == "zsh":  # zsh runs a bash completion function as bashcompinit does: under `emulate -L sh`
        body = code.split("\n", 1)[1]
        code = f"source {path}\nask() {{\nemulate -L sh\n{body}}}\nask\n"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd), "TERM": "dumb"}
    done = subprocess.run([shell_or_fail(shell), "-c", code], capture_output=True, text=True, cwd=cwd, timeout=60,
                          env=env)
    assert done.returncode == 0, done.stderr
    offered = [line for line in done.stdout.splitlines() if line]
    # zsh's compadd keeps the matches that start with what was typed (bashcompinit's compgen leaves it that)
    return [o for o in offered if o.startswith(typed[-1])] if shell == "zsh" else offered


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_bash_and_zsh_complete_what_sunset_takes(
    shell: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = script(shell, tmp_path, capsys)
    (tmp_path / "README.md").write_text("x\n", encoding="utf-8")
    for typed, expected in CASES:
        assert ask_bash(shell, path, typed, tmp_path) == expected, typed


def test_fish_completes_what_sunset_takes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = script("fish", tmp_path, capsys)
    (tmp_path / "README.md").write_text("x\n", encoding="utf-8")
    for typed, expected in CASES:
        line = "sunset " + " ".join(typed)
        done = subprocess.run([shell_or_fail("fish"), "--no-config", "-c", f"source {path}; complete -C {line!r}"],
                              capture_output=True, text=True, cwd=tmp_path, timeout=60)
        assert done.returncode == 0, done.stderr
        offered = sorted(out.split("\t")[0] for out in done.stdout.splitlines() if out)
        assert offered == expected, (typed, offered)


def test_every_subcommand_of_the_parser_is_completed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    subcommands = sorted(build_parser()._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    assert ask_bash("bash", script("bash", tmp_path, capsys), [""], tmp_path) == subcommands
