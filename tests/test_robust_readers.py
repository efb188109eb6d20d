"""Hostile input never stops a scan: every reader fails with a ParseError (message, line), never a
crash, a RecursionError or another exception, and never reads for ever (issue 13)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from scanner.core.tree import ParseError
from scanner.rules.documents import KINDS

ROOT = Path(__file__).resolve().parent.parent
YAML_KINDS = ["gitlab-ci", "gitlab-yml", "database-yml", "registry-config", "helm-values", "compose", "k8s-manifest"]


def _parse_in_child(kind: str, text_expr: str) -> subprocess.CompletedProcess[str]:
    """Parse in a child interpreter: a C parser's stack overflow kills the process (SIGSEGV)."""
    code = (
        "from scanner.rules.documents import KINDS\n"
        "from scanner.core.tree import ParseError\n"
        f"text = {text_expr}\n"
        "try:\n"
        f"    KINDS[{kind!r}].parse(text)\n"
        "    print('ok')\n"
        "except ParseError as exc:\n"
        "    print('error', exc.line, exc.message)\n"
    )
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("kind", YAML_KINDS)
@pytest.mark.parametrize(("text_expr", "line"), [
    ("'a: ' + '[' * 28000", 1), ("'a: ' + '{b: ' * 28000", 1), ("'- ' * 28000 + 'x'", 1),
    ("'? ' * 28000 + 'x'", 1), ("'a:\\r' + '- ' * 28000 + 'x'", 2)])
def test_yaml_nested_28000_deep_is_an_error_not_a_crash(kind: str, text_expr: str, line: int) -> None:
    started = time.perf_counter()
    done = _parse_in_child(kind, text_expr)
    assert done.returncode == 0, done.stderr[-500:]
    assert done.stdout.startswith(f"error {line} document is nested deeper than 100 levels"), done.stdout
    assert time.perf_counter() - started < 20


def test_yaml_depth_error_names_the_line_where_the_limit_is_passed() -> None:
    text = "x: 1\ny:\n" + "".join(" " * i + "- z:\n" for i in range(0, 120, 2)) + "a: " + "[" * 5000 + "\n"
    with pytest.raises(ParseError) as caught:
        KINDS["gitlab-ci"].parse("x: 1\nb: " + "[" * 200 + "]" * 200 + "\n")
    assert (caught.value.line, caught.value.message) == (2, "document is nested deeper than 100 levels")
    with pytest.raises(ParseError) as caught:
        KINDS["gitlab-ci"].parse(text)
    assert caught.value.line is not None and caught.value.line > 2


@pytest.mark.parametrize("text", [
    "a: '" + "[" * 500 + "'\nb: \"" + "{" * 500 + "\"\n",
    "# " + "[" * 500 + "\na: 1\n",
    "a: |\n  " + "[" * 500 + "\n  " + "- " * 300 + "\nb: 2\n",
    "a: " + "x[" * 500 + "\n",
    "l: [" + ", ".join(["[1, {a: [2]}]"] * 300) + "]\n",
])
def test_brackets_in_scalars_comments_and_wide_flows_are_not_depth(text: str) -> None:
    tree = KINDS["gitlab-ci"].parse(text)
    assert tree.roots


def test_depth_100_still_reads_and_101_is_refused_as_before() -> None:
    assert KINDS["gitlab-ci"].parse("a: " + "[" * 99 + "]" * 99 + "\n").roots
    with pytest.raises(ParseError, match="nested deeper than 100"):
        KINDS["gitlab-ci"].parse("a: " + "[" * 100 + "x" + "]" * 100 + "\n")


_ESCAPE = "invalid YAML: while parsing a quoted scalar found invalid Unicode character escape code (line 2 not read)"


@pytest.mark.parametrize(("text", "roots", "warning"), [
    ("a: &x {<<: *x}\n", [], (1, "a merge key (<<) refers to the mapping it is in (line 1 not read)")),
    ("b: 1\na: &x\n  c: 1\n  <<: [*x]\n", [{"b": 1, "a": {"c": 1}}],
     (4, "a merge key (<<) refers to the mapping it is in (line 4 not read)")),
    ('x: 1\na: "\\U00110000"\n', [{"x": 1}], (2, _ESCAPE)),
    ('x: 1\na: "\\UFFFFFFFF"\n', [{"x": 1}], (2, _ESCAPE)),
])
def test_yaml_self_merge_and_bad_escape_are_one_problem_each(text: str, roots: list[Any],
                                                              warning: tuple[int, str]) -> None:
    """The broken line is one problem; the rest of the file is read (scanner.readers.yamlrepair)."""
    tree = KINDS["gitlab-ci"].parse(text)
    assert (tree.roots, tree.warnings) == (roots, [warning])


@pytest.mark.parametrize("eol", ["\r", "\r\n", "\u2028", "\x85"])
def test_templated_yaml_with_any_line_break_reads_its_expressions_back(eol: str) -> None:
    text = eol.join(["production:", "  a: <%= ENV['A'] %>", "  b: 2", "  c: {{C}}", ""])
    tree = KINDS["gitlab-yml"].parse(text)
    assert tree.roots == [{"production": {"a": "<%= ENV['A'] %>", "b": 2, "c": "{{C}}"}}]


_OK_RB = "gitlab_rails['b'] = 1\n"


@pytest.mark.parametrize(("value", "message"), [
    ("[" * 1000 + "]" * 1000, "setting not read: a value is nested deeper than 100 levels"),
    ("{a: " * 1000 + "1" + "}" * 1000, "setting not read: a value is nested deeper than 100 levels"),
    ('"#{' * 1500, "unterminated string (`#{…}` nested deeper than 100); the rest of this line is not read"),
])
def test_gitlab_rb_deep_value_is_a_warning_and_the_other_settings_are_read(value: str, message: str) -> None:
    tree = KINDS["omnibus-config"].parse(_OK_RB + "gitlab_rails['a'] = " + value + "\n" + "gitlab_rails['c'] = 1\n")
    assert tree.roots == [{"gitlab_rails": {"b": 1, "c": 1}}]
    assert tree.warnings == [(2, message)]
    with pytest.raises(ParseError, match="no setting could be read"):
        KINDS["omnibus-config"].parse("gitlab_rails['a'] = " + "[" * 1000)


@pytest.mark.parametrize("value", ["{b = " * 1000, "[" * 1000, "[" * 1000 + "]" * 1000, "9" * 5000, '"\\UFFFFFFFF"'])
def test_toml_deep_or_huge_value_is_a_warning_and_the_rest_is_read(value: str) -> None:
    tree = KINDS["runner-config"].parse("a = " + value + "\n[x]\nc = 1\n")
    assert tree.roots == [{"x": {"c": 1}}]
    assert [line for line, _ in tree.warnings] == [1]
    with pytest.raises(ParseError):
        KINDS["runner-config"].parse("a = " + value + "\n")


@pytest.mark.parametrize(("expr", "line"), [
    ("+".join(["1"] * 1001), 3), ("+".join(["1"] * 5000), 3), ("a" + ".b" * 300, 3), ("-" * 300 + "1", 3),
    ("(\n" + "+".join(["1"] * 5000) + "\n)\ny = 1", 3),  # a statement over lines: its first line
])
def test_python_nested_too_deep_is_a_parse_error_and_never_reaches_the_extractor(expr: str, line: int | None) -> None:
    text = "import requests\nrequests.get('https://h/api/v4/projects')\nx = " + expr + "\n"
    with pytest.raises(ParseError, match="Python nested") as caught:
        KINDS["python-source"].parse(text)
    assert caught.value.line == line
    from scanner.readers.api.python import extract as pysource

    with pytest.raises(ParseError):
        pysource.extract(text)
    assert len(pysource.extract(text.replace(expr, "+".join(["'a'"] * 150)))) == 1


def _bomb() -> str:
    """A billion laughs under `include:` (9^9 leaves in some 350 bytes)."""
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    return "\n".join(lines) + "\ninclude: *i\n"


def test_alias_bomb_under_include_is_read_once_in_bounded_memory(tmp_path: Path) -> None:
    (tmp_path / ".gitlab-ci.yml").write_text(_bomb())
    code = (
        "import json, resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))\n"
        "from pathlib import Path\n"
        "from scanner.core.versions import Version\n"
        "from scanner.engine.scan import ScanOptions, scan\n"
        "from scanner.rules.catalog import builtin_policy_dir, load_policies\n"
        "r = scan([Path(sys.argv[1])], load_policies([builtin_policy_dir()]), ScanOptions(Version.parse('19.0')))\n"
        "print(json.dumps(sorted({(e.line, e.message) for e in r.errors})))\n"
    )
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-800:]
    assert done.stdout.strip() == '[[8, "an include must be a string or a mapping"]]'
    assert time.perf_counter() - started < 30


def test_include_entries_stop_after_1000_with_a_problem() -> None:
    from scanner.core.document import Document
    from scanner.readers import ci

    items = "[" + ", ".join(f"'/f{i}.yml'" for i in range(40)) + "]"
    text = f"x: &l {items}\n" + "".join(f"j{i}:\n  trigger:\n    include: *l\n" for i in range(30))
    doc = Document("c.yml", Path("c.yml"), "gitlab-ci", text, KINDS["gitlab-ci"].parse(text))
    entries = ci.include_entries(doc)
    assert len(entries) == 1001
    assert entries[-1].kind == "invalid"
    assert entries[-1].problem == "more than 1000 include entries in one file; the rest are not read"


def test_a_bug_in_an_extractor_on_one_file_is_an_input_error_and_the_rest_is_scanned(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fault injection: no input is known to make an extractor raise (the fuzz suite looks for one);
    when one does, that file is an `internal error` entry with its path and the scan goes on."""
    from scanner.commands.scan import load
    from scanner.core.versions import Version
    from scanner.engine.scan import ScanOptions, scan
    from scanner.readers.api import javascript as jssource

    call = 'const r = await fetch("https://gitlab.example.com/api/v4/projects/1/merge_requests/2/changes");\n'
    (tmp_path / "ok.js").write_text(call)
    (tmp_path / "bad.js").write_text("// BOOM\n" + call)
    real = jssource.extract

    def extract(text: str) -> object:
        if "BOOM" in text:
            raise RuntimeError("extractor bug")
        return real(text)

    monkeypatch.setattr(jssource, "extract", extract)
    report = scan([tmp_path], load(None), ScanOptions(Version.parse("19.0")))
    assert [(f.rule_id, f.location.path, f.location.line, f.location.column) for f in report.findings] == [
        ("rest-mr-changes-endpoint", "ok.js", 1, 57)]
    assert [(e.path, e.line, e.message) for e in report.errors] == [
        ("bad.js", None, "internal error (a bug in sunset; please report it): RuntimeError: extractor bug; "
         "file not fully checked")]
