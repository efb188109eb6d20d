"""docs/architecture.md's recipes name exactly the files a new kind needs.

In a copy of the package, a throwaway matcher kind, file kind and output format are each added by
touching only the files the first sentence of its recipe names; one scan in a fresh interpreter then
reads a file of the new kind with a policy of the new matcher kind and prints the new format.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_rules_table import BASE

ROOT = Path(__file__).resolve().parent.parent

MATCHER = '''"""`word`: a word in a file's text, at its exact span."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

from scanner.rules import spec
from scanner.rules.facets import Facets
from scanner.rules.hits import Hit
from scanner.rules.kind import MatcherKind
from scanner.rules.policy import Policy


class Spec(spec.Spec):
    words: tuple[str, ...] = spec.field(min_length=1)


@dataclass(frozen=True, slots=True)
class WordMatcher(spec.Matcher):
    kind: ClassVar[str] = "word"
    words: frozenset[str]


def compile(s: Spec, build: spec.Build) -> WordMatcher:
    return WordMatcher(frozenset(s.words))


def evaluate(entries: list[tuple[Policy, WordMatcher]], facets: Facets) -> Iterator[Hit]:
    for number, line in enumerate(facets.doc.lines, start=1):
        for found in re.finditer(r"\\w+", line):
            for policy, m in entries:
                if found.group(0) in m.words:
                    span = (number, found.start() + 1, number, found.end() + 1)
                    yield Hit(policy, (0,), "value", found.group(0), span)


KIND = MatcherKind(Spec, WordMatcher, compile, {"text": evaluate})
'''

READER = '''"""`.notes` files: plain text, read only for what policies look for in it."""

from __future__ import annotations

from pathlib import Path

from scanner.core.tree import Tree


def is_notes(path: Path) -> bool:
    return path.suffix == ".notes"


def parse_notes(text: str) -> Tree:
    return Tree(roots=[text], root_spans=[(1, 1, text.count("\\n") + 1, 1)])
'''

FORMAT = '''"""`--format lines`: one finding a line, `policy path:line:column`."""

from __future__ import annotations

from scanner.core.results import Report
from scanner.report.options import RenderOptions


def render(report: Report, options: RenderOptions) -> str:
    return "".join(f"{f.rule_id} {f.location.path}:{f.location.line}:{f.location.column}\\n"
                   for f in report.findings)
'''

POLICY = BASE + "match: {kind: word, words: [sunset, dusk]}\n"


def _insert_after(text: str, pattern: str, added: str) -> str:
    """`added` on the line after the first line matching `pattern` (a new row of a table)."""
    found = re.search(pattern, text, re.MULTILINE)
    assert found is not None, f"the recipe's table has moved: no line matches {pattern!r}"
    end = text.index("\n", found.end()) + 1
    return text[:end] + added + text[end:]


def _table_row(text: str) -> str:
    return _insert_after(text, r"^    for module in \($", "        word,\n").replace(
        "from scanner.rules import (\n", "from scanner.rules import (\n    word,\n")


def _document_row(text: str) -> str:
    row = '    DocumentKind("notes", Lazy("scanner.readers.notes:parse_notes"), ("text",), notes.is_notes),\n'
    text = _insert_after(text, r"^KINDS: dict\[str, DocumentKind\] = _kinds\($", row)
    return text.replace("from scanner.readers.api import detect as api\n",
                        "from scanner.readers import notes\nfrom scanner.readers.api import detect as api\n")


def _format_row(text: str) -> str:
    function = ('def _lines(report: Report, options: RenderOptions) -> str:\n'
                '    from scanner.report import lines\n\n'
                '    return lines.render(redact_report(report), options)\n\n\n')
    table = re.search(r"^FORMATS: dict\[str, Renderer\] = \{$", text, re.MULTILINE)
    assert table is not None, "the recipe's table has moved"
    text = text[: table.start()] + function + text[table.start() :]
    return _insert_after(text, r"^FORMATS: dict\[str, Renderer\] = \{$", '    "lines": _lines,\n')


# Each recipe: the new files (path with the recipe's placeholder filled → content) and the edits.
CHANGES = {
    "matcher kind": ({"<kind>": "word"}, {"scanner/rules/word.py": MATCHER}, {"scanner/rules/table.py": _table_row}),
    "file kind or a language": ({"<reader>": "notes"}, {"scanner/readers/notes.py": READER},
                                {"scanner/rules/documents.py": _document_row}),
    "output format": ({"<name>": "lines"}, {"scanner/report/lines.py": FORMAT},
                      {"scanner/report/formats.py": _format_row}),
}


def named(recipe: str) -> set[str]:
    """The files the first sentence of a recipe names (outside `tests/`)."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert f"**Add a {recipe}.**" in text or f"**Add an {recipe}.**" in text, f"no recipe for {recipe}"
    body = re.split(rf"\*\*Add an? {re.escape(recipe)}\.\*\*", text, maxsplit=1)[1]
    first = re.split(r"\.\s", " ".join(body.split()), maxsplit=1)[0]
    return {p for p in re.findall(r"`((?:scanner|tests)/[^`]+\.py)`", first) if not p.startswith("tests/")}


@pytest.mark.parametrize("recipe", list(CHANGES))
def test_each_recipe_names_the_files_its_kind_touches(recipe: str) -> None:
    fill, created, edited = CHANGES[recipe]
    names = set()
    for path in named(recipe):
        for placeholder, value in fill.items():
            path = path.replace(placeholder, value)
        names.add(path)
    assert names == {*created, *edited}
    assert len(names) <= 3


@pytest.mark.slow
def test_a_kind_of_each_added_by_its_recipe_is_used_by_a_scan(tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(ROOT / "scanner", copy / "scanner", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "policies", copy / "policies")
    for _, created, edited in CHANGES.values():
        for path, content in created.items():
            assert not (copy / path).exists()
            (copy / path).write_text(content, encoding="utf-8")
        for path, change in edited.items():
            before = (copy / path).read_text(encoding="utf-8")
            (copy / path).write_text(change(before), encoding="utf-8")
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "throwaway-word.yaml").write_text(POLICY)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "evening.notes").write_text("the sun sets\nat sunset, then dusk\n")
    (repo / "other.txt").write_text("sunset\n")  # no kind claims it
    env = {**os.environ, "PYTHONPATH": str(copy), "SUNSET_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run(
        [sys.executable, "-m", "scanner.cli", "scan", str(repo), "--policies", str(policies),
         "--select", "throwaway-word", "--format", "lines"],
        capture_output=True, text=True, env=env, cwd=repo, timeout=120,
    )
    assert done.stderr == ""
    assert done.stdout == "throwaway-word evening.notes:2:4\nthrowaway-word evening.notes:2:17\n"
    assert done.returncode == 1
