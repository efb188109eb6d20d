"""Issue 27, one line model and output linear in the input: lines end at LF, CRLF or CR and nowhere
else (form feed, VT, NEL, U+2028/2029 are characters of a line); a text policy's places come from one
line index; a snippet is clipped around its finding; every format a person reads shows control and
bidi characters as escapes."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from scanner.cli import main
from scanner.core.document import Document
from scanner.core.lines import LineIndex, split_lines
from scanner.core.results import SNIPPET_CHARS
from scanner.core.tree import Tree
from scanner.engine.findings import MAX_PER_LINE
from scanner.rules import text as text_rule
from scanner.rules.facets import Facets
from scanner.rules.policy import Policy

JWT_JOB = '  script: [echo "$CI_JOB_JWT"]\n'


def _scan(path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, object]:
    main(["scan", str(path), "--format", "json", "--fail-on", "never", *extra])
    report: dict[str, object] = json.loads(capsys.readouterr().out)
    return report


def test_split_lines_and_the_index() -> None:
    text = "a\x0cb\x0bc\x85d\u2028e\u2029f\r\ng\rh\ni"
    assert split_lines(text) == ["a\x0cb\x0bc\x85d\u2028e\u2029f", "g", "h", "i"]
    assert split_lines("x\n") == ["x"] and split_lines("") == []
    index = LineIndex(text)
    assert index.position(text.index("f")) == (1, 11)
    assert index.position(text.index("g")) == (2, 1)
    assert index.position(text.index("i")) == (4, 1)


@pytest.mark.parametrize("inside", ["\x0c", "\x0b", "\x85", "\u2028", "\u2029"])
def test_characters_python_splits_at_do_not_move_findings(tmp_path: Path, inside: str,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    ci = tmp_path / ".gitlab-ci.yml"
    ci.write_text(f'variables:\n  NOTE: "a{inside}b"\njob:\n{JWT_JOB}', encoding="utf-8")
    report = _scan(ci, capsys)
    found = [(f["rule_id"], f["line"], f["column"], f["snippet"]) for f in report["findings"]]  # type: ignore[index]
    assert found == [("ci-job-jwt-variables", 4, 18, JWT_JOB.rstrip("\n"))]


@pytest.mark.parametrize("end", ["\r\n", "\r"])
def test_crlf_and_cr_files(tmp_path: Path, end: str, capsys: pytest.CaptureFixture[str]) -> None:
    ci = tmp_path / ".gitlab-ci.yml"
    ci.write_bytes(f"stages: [build]{end}job:{end}{JWT_JOB.rstrip()}{end}".encode())
    report = _scan(ci, capsys)
    found = [(f["rule_id"], f["line"], f["column"], f["snippet"]) for f in report["findings"]]  # type: ignore[index]
    assert found == [("ci-job-jwt-variables", 3, 18, JWT_JOB.rstrip("\n"))]


# A comment line first (a lone CR must end it), then what each kind reports; each file's finding.
KINDS = {
    ".gitlab-ci.yml": (["# c", "job:", "  script:", "    - echo $CI_JOB_JWT"], ("ci-job-jwt-variables", 4, 12)),
    "Dockerfile": (["FROM alpine", "# c", "RUN gitlab-runner register --url x --registration-token y"],
                   ("runner-registration-token", 3, 36)),
    "a.js": (["// c", "fetch(`${API}/api/v4/runners/1`, {method: 'PUT', body: JSON.stringify({active: false})});"],
             ("rest-runner-active", 2, 72)),
    "a.py": (["# c", "import requests",
              'requests.put("https://g.example.com/api/v4/runners/1", data={"active": False})'],
             ("rest-runner-active", 3, 63)),
    "a.rb": (["# c", 'HTTParty.put("#{ENV["CI_API_V4_URL"]}/runners/1", body: {active: false})'],
             ("rest-runner-active", 2, 58)),
    "a.sh": (["# c", "echo one", 'curl -X PUT "$CI_API_V4_URL/runners/1" --form "active=false"'],
             ("rest-runner-active", 3, 48)),
    "config.toml": (["# c", "concurrent = 1", "[[runners]]", '  url = "x"', '  executor = "docker+machine"'],
                    ("runner-docker-machine-executor", 5, 3)),
    "gitlab.rb": (["# c", "external_url 'https://x'", "gitlab_rails['omniauth_providers'] = [{ name: 'twitter' }]"],
                  ("omniauth-removed-providers", 3, 41)),
}


@pytest.mark.parametrize("end", ["\n", "\r\n", "\r"])
def test_a_lone_cr_ends_a_line_for_every_reader(tmp_path: Path, end: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Recognition, the settings parsers, the source readers and the shell reader all end a line at a
    lone CR: each kind's file is recognised and its finding is where it is with LF line ends."""
    for name, (lines, _) in KINDS.items():
        (tmp_path / name).write_bytes(end.join(lines + [""]).encode())
    report = _scan(tmp_path, capsys)
    found = sorted((f["path"], f["rule_id"], f["line"], f["column"]) for f in report["findings"])  # type: ignore[index]
    assert found == sorted((name, *where) for name, (_, where) in KINDS.items())
    assert report["errors"] == []


@pytest.mark.parametrize(("text", "keys"), [("ARG \\\n#\n", []), ("RUN a \\\n", []), ("FROM x\n\n", []),
                                           ("ENV A=1 \\\n  # B=2\n  C=3\n", [("A", 1, 7), ("C", 3, 5)])])
def test_a_dockerfile_s_lines_end_where_its_text_does(text: str, keys: list[tuple[str, int, int]]) -> None:
    """A continuation or a comment at the end reaches the last line, not one after the final line end;
    a comment line inside a continued ENV is no assignment."""
    from scanner.readers.settings.dockerfile import parse_dockerfile

    tree = parse_dockerfile(text)
    last = len(split_lines(text))
    spans = [span for entry in tree.table.values()
             for span in (entry if isinstance(entry, list) else [s for pair in entry.values() for s in pair])]
    assert all(1 <= line <= end <= last for line, _, end, _ in spans) and tree.root_spans == [(1, 1, last, 1)]
    [env] = [item["ENV"] for item in tree.roots[0] if "ENV" in item] or [{}]
    assert [(k, *tree.table[id(env)][k][1][:2]) for k in env] == keys


def test_lf_line_ends_keeps_every_offset_and_line() -> None:
    from scanner.core.lines import lf_line_ends

    text = "a\rb\r\nc\r\rd\n\re"
    plain = lf_line_ends(text)
    assert plain == "a\nb\r\nc\n\nd\n\ne"
    assert [LineIndex(plain).position(i) for i in range(len(text))] == [
        LineIndex(text).position(i) for i in range(len(text))]


@pytest.mark.slow
def test_a_text_policy_over_240000_matching_lines(policies: list[Policy]) -> None:
    """Each match's place comes from the line index: linear (a hang catcher, not a timing)."""
    [jwks] = [p for p in policies if p.id == "jwks-instance-endpoint"]
    line = "curl -s https://gitlab.example.com/-/jwks\n"
    text = line * 240_000
    doc = Document("x.sh", Path("x.sh"), "shell", text, Tree([], []))
    started = time.monotonic()
    assert isinstance(jwks.matcher, text_rule.TextMatcher)
    hits = list(text_rule.evaluate([(jwks, jwks.matcher)], Facets(doc, None, None, lambda _: None)))
    assert time.monotonic() - started < 30
    assert len(hits) == 240_000
    assert hits[-1].span == (240_000, 35, 240_000, 42)


def test_a_long_line_is_clipped_around_its_finding(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ci = tmp_path / ".gitlab-ci.yml"
    pad = "x" * 100_000
    ci.write_text(f'job:\n  script: [echo "{pad} $CI_JOB_JWT {pad}"]\n', encoding="utf-8")
    report = _scan(ci, capsys)
    [finding] = report["findings"]  # type: ignore[index]
    assert (finding["line"], finding["column"]) == (2, 100_019)
    assert len(finding["snippet"]) == SNIPPET_CHARS and "$CI_JOB_JWT" in finding["snippet"]
    main(["scan", str(ci), "--format", "text", "--fail-on", "never", "--color", "never"])
    out = capsys.readouterr().out
    assert len(out) < 5_000 and "^^^^^^^^^^" in out


def test_thousands_of_findings_on_one_line_stay_linear(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A 96 KB line with 8,000 `$CI_JOB_JWT`: each finding carries a clipped snippet, not the line, and
    the findings on one line are bounded (tests/test_work_bounds.py)."""
    ci = tmp_path / ".gitlab-ci.yml"
    ci.write_text("job:\n  script: [echo " + " ".join(["$CI_JOB_JWT"] * 8_000) + "]\n", encoding="utf-8")
    started = time.monotonic()
    main(["scan", str(ci), "--format", "json", "--fail-on", "never"])
    out = capsys.readouterr().out
    assert time.monotonic() - started < 120
    report = json.loads(out)
    found = [(f["line"], f["column"], len(f["snippet"]) == SNIPPET_CHARS) for f in report["findings"]]
    assert found == [(2, 17 + 12 * i, True) for i in range(MAX_PER_LINE)]  # the rest: one warning
    left_out = [w["message"].split(" in this file")[0] for w in report["warnings"]]
    assert left_out == [f"{8_000 - MAX_PER_LINE:,} more findings"]


ESCAPED = "evil\x1b[2J\u202egnp"


@pytest.mark.parametrize("fmt", ["concise", "codequality", "markdown", "html", "sarif"])
def test_file_names_with_escapes_are_shown_escaped(tmp_path: Path, fmt: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / ESCAPED
    folder.mkdir()
    (folder / ".gitlab-ci.yml").write_text("job:\n" + JWT_JOB, encoding="utf-8")
    main(["scan", str(tmp_path), "--format", fmt, "--fail-on", "never"])
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\u202e" not in out
    assert fmt == "sarif" or "\\u202e" in out or "\\\\u202e" in out  # SARIF: its URIs are percent-encoded
