"""The kinds of document sunset reads, chosen in one explicit dict.

A kind names its parser (text → `Tree` with positions), its evaluator (policies → hits) and,
for files found by walking a directory, how it recognises them. GitLab CI files are reached
as pipeline roots and through includes (`scanner.discover.pipeline_roots`), so that kind
claims nothing by itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from scanner.document import Document
from scanner.match import Hit, PolicyIndex, evaluate_ci, evaluate_shell
from scanner.policy import KIND_NAMES
from scanner.shell import is_shell_script, parse_script
from scanner.tree import Tree
from scanner.yamldoc import load_yaml


@dataclass(frozen=True, slots=True)
class Kind:
    name: str
    parse: Callable[[str], Tree]
    evaluate: Callable[[PolicyIndex, Document], Iterable[Hit]]
    claims: Callable[[Path], bool] | None = None


KINDS: dict[str, Kind] = {
    "gitlab-ci": Kind("gitlab-ci", load_yaml, evaluate_ci),
    "shell-script": Kind("shell-script", parse_script, evaluate_shell, is_shell_script),
}

if tuple(KINDS) != KIND_NAMES:  # pragma: no cover - a developer error, caught by any test run
    raise RuntimeError(f"scanner.kinds.KINDS {tuple(KINDS)} != scanner.policy.KIND_NAMES {KIND_NAMES}")


def claiming_kind(path: Path) -> Kind | None:
    """The first kind that recognises a file found by walking, if any."""
    for kind in KINDS.values():
        if kind.claims is not None and kind.claims(path):
            return kind
    return None
