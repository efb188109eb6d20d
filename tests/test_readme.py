"""The README as a user reads it: its first two commands are the set-up CI runs, its quickstart output is
what sunset prints today, every command it shows runs, every link names a file of this checkout, and its
tables name only formats and file kinds that exist."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from conftest import ROOT, sunset

README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOB = "https://gitlab.com/gitlab-sunset/gitlab-sunset/-/blob/main/"


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", README, flags=re.M | re.S)


def test_the_first_two_commands_are_set_up_and_scan_then_the_tests_ci_runs() -> None:
    first = README.split("```sh\n", 1)[1].split("```", 1)[0]
    commands = [line.split("#", 1)[0].strip() for line in first.splitlines()]
    assert commands == ["bash .ci/setup && .venv/bin/sunset scan samples/", "bash .ci/test"]
    assert README.index("```sh") < 20  # on the first screen
    run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "\nbash .ci/test\n" in run  # CI runs the README's test command
    assert "bash .ci/setup" in (ROOT / ".ci" / "test").read_text(encoding="utf-8")


def test_the_quickstart_output_is_what_sunset_prints() -> None:
    (console,) = _blocks("console")
    command, *shown = console.splitlines()
    assert command.startswith("$ sunset ")
    done = sunset(*shlex.split(command[2:])[1:], "--color", "never", cwd=ROOT)
    assert done.returncode == 1, done.stderr
    printed = done.stdout.splitlines()
    at = 0
    for line in shown:
        if line == "…":  # lines left out of the README
            continue
        assert line in printed[at:], f"README shows {line!r}; sunset prints:\n{done.stdout}"
        at = printed.index(line, at) + 1
    assert shown[-1] == printed[-1]  # the summary, as printed


def _shown_commands() -> list[list[str]]:
    commands = []
    for block in _blocks("sh"):
        for line in block.splitlines():
            line = line.split("  #", 1)[0].strip()
            if line.startswith("sunset ") and "--gitlab" not in line and "stream" not in line.split()[1]:
                commands.append(shlex.split(line)[1:])
    return commands


@pytest.mark.parametrize("argv", _shown_commands(), ids=lambda a: " ".join(a))
def test_every_offline_command_the_readme_shows_runs(argv: list[str], tmp_path: Path) -> None:
    """Run against a copy of the samples (what `sunset fix` or `-o` would write lands in tmp_path)."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".gitlab-ci.yml").write_text("include:\n  - template: Terraform/Base.latest.gitlab-ci.yml\n",
                                         encoding="utf-8")
    argv = [str(ROOT / a) if a.startswith("samples/") else a for a in argv]
    done = sunset(*argv, "--color", "never", cwd=repo) if argv[0] == "scan" else sunset(*argv, cwd=repo)
    assert done.returncode in (0, 1), (argv, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    if argv[0] == "scan" and "--from" in argv:
        assert "Upgrade from GitLab 17.5 to 18.0" in done.stdout
    for spec in [a for i, a in enumerate(argv) if i and argv[i - 1] == "-o"]:
        assert (repo / spec.split("=", 1)[1]).is_file()


def test_every_link_names_a_file_of_this_checkout() -> None:
    links = re.findall(r"\]\((https?://[^)\s]+)\)", README)
    assert links, "the README links its documents"
    for link in links:
        if link.startswith(BLOB):
            assert (ROOT / link[len(BLOB):].split("#", 1)[0]).is_file(), link
        else:
            assert link.startswith("https://gitlab.com/gitlab-sunset/gitlab-sunset/"), link
    assert not re.findall(r"\]\((?!https?://)[^)]+\)", README), "relative links break on PyPI"


def test_the_formats_table_names_every_format_and_only_those() -> None:
    from scanner.report.formats import FORMATS

    table = README.split("| `--format` | for |", 1)[1].split("\n\n", 1)[0]
    named = set(re.findall(r"^\| `(\w+)`(?:.*?, `(\w+)`)? \|", table, flags=re.M))
    formats = {f for pair in named for f in pair if f}
    assert formats == set(FORMATS)


def test_the_readme_never_says_seed() -> None:
    assert "seed" not in README.lower()
