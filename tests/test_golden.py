"""Golden files: each output format over `samples/`, byte for byte after scrubbing volatile parts.

Regenerate deliberately with `SUNSET_UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from scanner import __version__
from scanner.cli import main

from conftest import ROOT

GOLDEN = Path(__file__).parent / "golden"
FORMATS = {
    "text": "samples.txt",
    "json": "samples.json",
    "sarif": "samples.sarif",
    "codequality": "samples.codequality.json",
    "markdown": "samples.md",
    "html": "samples.html",
}


def scrub(text: str) -> str:
    """Leave out what changes without the output changing: sunset's own version."""
    text = re.sub(rf'"version": "{re.escape(__version__)}"', '"version": "<version>"', text)
    return text.replace(f"sunset {__version__}", "sunset <version>")


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_samples_golden(fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    for name in [n for n in os.environ if n.startswith("CI_")]:
        monkeypatch.delenv(name)  # the Markdown links depend on GitLab CI's variables
    out = tmp_path / "out"
    code = main(["scan", "samples", "--format", fmt, "--output", str(out), "--color", "never"])
    assert code == 1  # the samples are full of deprecated usage
    actual = scrub(out.read_text(encoding="utf-8"))
    golden = GOLDEN / FORMATS[fmt]
    if os.environ.get("SUNSET_UPDATE_GOLDEN"):
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(actual, encoding="utf-8")
    assert actual == golden.read_text(encoding="utf-8")
