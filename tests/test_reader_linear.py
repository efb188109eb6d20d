"""The settings readers stay linear on long crafted inputs (issue 27): each case is parsed in a child process
that is killed past a generous budget, so a reader gone quadratic fails here instead of hanging a scan. The
budget catches a hang, it does not measure speed (bench/ does): each case takes well under a second alone,
and took from 6 s to several minutes when the reader was quadratic."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BUDGET = 30.0  # seconds: a loaded 2-core machine, and a Python start-up

CASES = {
    # one position index per instruction, not a count of line breaks per word
    "dockerfile ENV over 20,000 continued lines": (
        "scanner.readers.settings.dockerfile:parse_dockerfile",
        "'FROM x\\nENV ' + ' \\\\\\n    '.join(f'A{i}=v{i}' for i in range(20000)) + '\\n'"),
    "dockerfile ENV with a quote never closed": (
        "scanner.readers.settings.dockerfile:parse_dockerfile", "'FROM x\\nENV A=\"' + 'x ' * 200000 + '\\n'"),
    # a bracket left open: reading goes on at the next statement, never back over what it read
    "gitlab.rb with 20,000 brackets never closed": (
        "scanner.readers.settings.omnibus:parse_gitlab_rb", "'a[\\n' * 20000"),
    "gitlab.rb with 20,000 continued lines and a stray closer": (
        "scanner.readers.settings.omnibus:parse_gitlab_rb", "'a = 1 +\\n' * 20000 + ')\\n'"),
    "gitlab.rb with 20,000 quotes left open": (
        "scanner.readers.settings.omnibus:parse_gitlab_rb", "\"x['a'] = 'abc\\n\" * 20000"),
    # templated text: each line's start looked at once; an unclosed opener looked for once
    "templated YAML with 400,000 expressions on one line": (
        "scanner.readers.settings.templated:load_templated_yaml", "'a: ' + '{{x}}' * 400000 + '\\n'"),
    "templated YAML with 100,000 unclosed openers": (
        "scanner.readers.settings.templated:load_templated_yaml", "'a: ' + '{{' * 100000 + '\\n'"),
    "templated gitlab.rb with 100,000 tags on one line": (
        "scanner.readers.settings.parsers:parse_omnibus", "\"x['a'] = \" + '{{ y }}' * 100000 + '\\n'"),
    "templated config.toml with 100,000 unclosed openers": (
        "scanner.readers.settings.parsers:parse_runner_config", "'a = ' + '{{' * 100000 + '\\n'"),
    "Terraform helm_release with 20,000 set blocks": (
        "scanner.readers.settings.helmrelease:releases",
        "'resource \"helm_release\" \"r\" {\\n chart = \"gitlab\"\\n' + "
        "'  set {\\n name = \"a\"\\n value = var.x\\n }\\n' * 20000 + '}\\n'"),
}

_CHILD = """
import importlib, sys
module, _, name = sys.argv[1].partition(":")
read = getattr(importlib.import_module(module), name)
text = eval(sys.argv[2])
try:
    read(text)
except Exception as exc:  # a ParseError is an answer too; only time is tested here
    if type(exc).__name__ not in ("ParseError", "YamlError"):
        raise
"""


@pytest.mark.parametrize("case", sorted(CASES))
def test_reader_stays_linear(case: str) -> None:
    reader, text = CASES[case]
    try:
        done = subprocess.run([sys.executable, "-c", _CHILD, reader, text], cwd=ROOT, capture_output=True,
                              text=True, timeout=BUDGET)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{case}: not read within {BUDGET:.0f} s")
    assert done.returncode == 0, done.stderr[-2000:]
