"""Ask checkov's own YAML loader which files it can read; run with checkov's venv python.

checkov's ``gitlab_ci`` runner swallows YAML errors (it logs them at DEBUG and counts
no parsing error), so a file it cannot load simply yields no results. This probe
calls the very loader and ``_parse_file`` the runner uses and prints, as JSON, one
record per path: ``{"path", "parsed", "error"}``.

Usage: .venv-checkov/bin/python checkov_probe.py FILE [FILE ...]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml
from checkov.common.parsers.yaml.loader import SafeLineLoader
from checkov.gitlab_ci.runner import Runner


def load_error(text: str) -> str | None:
    """The first line of the error checkov's loader hits on ``text``, if any."""
    try:
        list(yaml.load_all(text, Loader=SafeLineLoader))
    except Exception as exc:  # noqa: BLE001 - mirrors checkov's own broad except
        return str(exc).splitlines()[0]
    return None


def probe(path: str) -> dict[str, Any]:
    """One record: did checkov's gitlab_ci runner get a definition out of ``path``?"""
    text = Path(path).read_text(encoding="utf-8")
    parsed = Runner._parse_file(path, text) is not None  # noqa: SLF001 - the runner's own entry
    return {"path": path, "parsed": parsed, "error": load_error(text)}


def main(argv: list[str]) -> int:
    json.dump([probe(path) for path in argv], sys.stdout, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
