"""Issue 27, masking in errors: an input error's path is said as its message is, masked, in every
format — a path the user typed (`sunset scan glpat-….yml`) may hold a token."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import sunset

TOKEN = "glpat-xK9fQ2mZ7pL4vB8nR1tY"
FORMATS = ("text", "concise", "json", "sarif", "codequality", "markdown", "html")


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_missing_path_holding_a_token_is_masked_in_every_format(tmp_path: Path, fmt: str) -> None:
    done = sunset("scan", f"missing-{TOKEN}.yml", "--format", fmt, cwd=tmp_path)
    assert done.returncode == 1
    assert TOKEN not in done.stdout + done.stderr
    assert ("%2A%2A%2A%2A" if fmt == "sarif" else "****") in done.stdout  # SARIF: the path as a URI


def test_the_masked_path_is_the_error_s_path() -> None:
    done = sunset("scan", f"missing-{TOKEN}.yml", "--format", "json")
    assert json.loads(done.stdout)["errors"] == [{"path": "****", "line": None, "message": "no such file or directory"}]
    concise = sunset("scan", f"missing-{TOKEN}.yml", "--format", "concise")
    assert concise.stdout.splitlines()[0] == "****: input error: no such file or directory"


def test_a_plain_missing_path_is_said_as_written(tmp_path: Path) -> None:
    done = sunset("scan", "ci/missing.yml", "--format", "concise", cwd=tmp_path)
    assert done.stdout.splitlines()[0] == "ci/missing.yml: input error: no such file or directory"
