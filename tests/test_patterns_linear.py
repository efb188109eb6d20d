"""Issue 27, every pattern linear: each regular expression of the policy catalog runs over
adversarial input built for it — long runs of each character class it repeats, of its own words,
and of its words joined by the separators URLs and paths use — within a generous budget per
pattern. A pattern that backtracks (`[\\w.-]*gitlab[\\w.-]*` over `https://gitlabgitlab…`) takes
minutes here; a linear one takes a fraction of a second. This catches a hang, it measures nothing.
"""

from __future__ import annotations

import dataclasses
import re
import time
from typing import Any

import pytest

from scanner.rules import spec
from scanner.rules.catalog import builtin_policy_dir, load_policies

N = 20_000
BUDGET_S = 10.0
_CLASSES = ["a", "A", "0", "-", ".", "/", ":", "_", " ", "$", "{", "@", "=", "?", "&", '"', "'", "\\", "a/", "a.",
            "a-", "${", "/-/", "://", "a1", "\t"]


def _patterns() -> dict[str, str]:
    found: dict[str, str] = {}

    def walk(node: Any, pid: str, depth: int = 0) -> None:
        if depth > 8:
            return
        if isinstance(node, spec.Regex | re.Pattern):
            found.setdefault(node.pattern, pid)
        elif dataclasses.is_dataclass(node) and not isinstance(node, type):
            for f in dataclasses.fields(node):
                walk(getattr(node, f.name), pid, depth + 1)
        elif isinstance(node, list | tuple | set | frozenset):
            for item in node:
                walk(item, pid, depth + 1)
        elif isinstance(node, dict):
            for item in node.values():
                walk(item, pid, depth + 1)

    for policy in load_policies([builtin_policy_dir()]):
        walk(policy.matcher, policy.id)
    return found


PATTERNS = _patterns()


def adversarial(pattern: str) -> list[str]:
    words = list(dict.fromkeys(re.findall(r"[A-Za-z]{3,}", pattern)))[:8]
    out = [c * (N // len(c)) for c in _CLASSES]
    for w in words:
        for sep in ("", "/", ".", "-", "_", " "):
            out.append((w + sep) * (N // (len(w) + len(sep))))
        out += ["https://" + w + "." * N, "https://" + w + "/" + "a/" * (N // 2), "$" + w + "_" * N,
                "${" + w + ":-" * (N // 2)]
    return out


def test_the_catalog_has_patterns() -> None:
    assert len(PATTERNS) > 100


@pytest.mark.parametrize("pattern", sorted(PATTERNS), ids=[PATTERNS[p] for p in sorted(PATTERNS)])
def test_each_pattern_is_linear_on_input_built_for_it(pattern: str) -> None:
    compiled = re.compile(pattern)
    started = time.monotonic()
    for text in adversarial(pattern):
        for _ in compiled.finditer(text):
            pass
        assert time.monotonic() - started < BUDGET_S, (PATTERNS[pattern], text[:40])
