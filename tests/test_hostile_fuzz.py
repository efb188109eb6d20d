"""Issue 27, item 5: the hostile-input families as hypothesis suites, on the project's profiles
(tests/conftest.py: `dev` a few examples, `ci` more and derandomised, so a CI run repeats the one
before it). Each example is cheap (a pattern over a 5,000-character line, one command in this
process), so the number of examples is the time budget: seconds under `dev`, about a minute under `ci`.

* Patterns: a user policy with a random regex (lookaround, backreferences, nested quantifiers,
  broken syntax) is refused when it is loaded, in one line naming its file and field, or it runs in
  linear time over adversarial input built from its own characters.
* Special files: every option and configuration key that names a file, given a FIFO without a
  writer, /dev/zero, /dev/full, a folder, a symlink out of the repository, a dangling one, a missing
  file: one line or one input error, never a hang, a traceback or an internal error.
The masking family is in tests/test_planted_secrets.py (random tokens through every format).
"""

from __future__ import annotations

import io
import json
import os
import re
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_patterns_linear import POLICY

from scanner.cli import main
from scanner.core.document import Document
from scanner.core.tree import Tree
from scanner.rules import text as text_rule
from scanner.rules.catalog import PolicyLoadError, load_policies
from scanner.rules.facets import Facets

EXAMPLES = settings.default.max_examples
JWT_JOB = 'job:\n  script: [echo "$CI_JOB_JWT"]\n'
# A pattern that backtracks takes 2^n steps on a run of n characters: none ends on 5,000 of them. RE2's
# time is linear in the text, times the pattern's size (`(a){1,1000}` is a thousand states): within the
# budget of CPU seconds (this process's, so the machine's load does not count), a hang catcher.
RUN = 5_000
BUDGET_S = 5.0

# ------------------------------------------------------------- patterns

_ATOMS = ["a", "b", "x", "ab", ".", r"\w", r"\d", r"\s", "[a-z]", "[^/]", "/", "-", "$", "^", r"\b", "(?=a)",
          "(?!b)", "(?<=a)", "(?<!b)", r"\1", r"(?P=g)", "(?P<g>a)", "\\p{L}", "[[:alpha:]]", "(?i)a", "(?s:.)"]
_REGEX = st.recursive(
    st.sampled_from(_ATOMS),
    lambda inner: st.one_of(
        st.tuples(inner, inner).map("".join),
        st.tuples(inner, inner).map("|".join),
        st.tuples(inner, st.sampled_from(["+", "*", "?", "{2,}", "{1,1000}", "{1001}", "+?", "*+"])).map(
            lambda t: f"({t[0]}){t[1]}"),
        inner.map(lambda r: f"(?:{r})+"),
    ),
    max_leaves=8,
) | st.text(alphabet="()[]{}+*?|\\^$.ab1,:=!<P", min_size=1, max_size=14)


def _policy(regex: str) -> str:
    """A policy of a user's own whose text pattern is `regex` (on line 14 of its file)."""
    return POLICY.format(match=f"  kind: text\n  regex: {json.dumps(regex)}")


def _adversarial(regex: str) -> list[str]:
    """Long runs of each character of the pattern, alone and in pairs, and of its words."""
    chars = sorted({c for c in regex if c.isprintable()} | {"a", "b", " ", "/"})
    runs = [c * RUN for c in chars]
    runs += [(a + b) * (RUN // 2) for a, b in zip(chars, chars[1:], strict=False)]
    runs += [w * (RUN // len(w)) for w in re.findall(r"[A-Za-z]{2,}", regex)[:4]]
    return runs


def _run_policy(policy: Any, text: str) -> int:
    doc = Document("x.sh", Path("x.sh"), "shell", text, Tree([], []))
    return sum(1 for _ in text_rule.evaluate([(policy, policy.matcher)], Facets(doc, None, None, lambda _: None)))


@settings(max_examples=max(10, EXAMPLES // 3), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(regex=_REGEX)
def test_a_users_random_pattern_is_refused_or_linear(tmp_path_factory: pytest.TempPathFactory, regex: str) -> None:
    folder = tmp_path_factory.mktemp("mine")
    path = folder / "my-policy.yaml"
    path.write_text(_policy(regex), encoding="utf-8")
    try:
        [policy] = load_policies([folder])
    except PolicyLoadError as exc:
        said = str(exc)
        assert said.startswith(f"{path}:14: match: regex: "), said
        assert "\n" not in said and ("is not RE2 syntax" in said or "matches the empty text" in said), said
        return
    for text in _adversarial(regex):
        started = time.process_time()
        _run_policy(policy, text)
        assert time.process_time() - started < BUDGET_S, (regex, text[:20])


@pytest.mark.parametrize(("regex", "why"), [
    ("(a)\\1", "is not RE2 syntax"), ("a(?=b)", "is not RE2 syntax"), ("(?<!x)y", "is not RE2 syntax"),
    ("a*", "matches the empty text"), ("(", "is not RE2 syntax"),
])
def test_the_refusals_the_property_accepts(tmp_path: Path, regex: str, why: str) -> None:
    """Not vacuous: the property's two refusals happen, with the message it expects."""
    path = tmp_path / "my-policy.yaml"
    path.write_text(_policy(regex), encoding="utf-8")
    with pytest.raises(PolicyLoadError) as caught:
        load_policies([tmp_path])
    assert str(caught.value).startswith(f"{path}:14: match: regex: ") and why in str(caught.value)


def test_a_backtracking_bomb_is_linear(tmp_path: Path) -> None:
    """Not vacuous: a pattern a backtracking engine takes 2^n steps on loads and runs in the budget."""
    path = tmp_path / "my-policy.yaml"
    path.write_text(_policy("(x+x+)+y"), encoding="utf-8")
    [policy] = load_policies([tmp_path])
    started = time.process_time()
    assert _run_policy(policy, "x" * RUN) == 0 and _run_policy(policy, "x" * 20 + "y") == 1
    assert time.process_time() - started < BUDGET_S


# ------------------------------------------------------------- options naming special files

SPECIALS = ("fifo", "dev-zero", "dev-full", "folder", "symlink-out", "dangling", "missing", "symlink-loop")


def _special(root: Path, kind: str) -> str:
    """A path of this kind, made inside the repository at `root` (relative to it)."""
    name = f"special-{kind}"
    path = root / name
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "dev-full":
        path.symlink_to("/dev/full")
    elif kind == "folder":
        path.mkdir()
    elif kind == "symlink-out":
        outside = root.parent / "outside.yml"
        outside.write_text(JWT_JOB, encoding="utf-8")
        path.symlink_to(outside)
    elif kind == "dangling":
        path.symlink_to(root / "nowhere")
    elif kind == "symlink-loop":
        path.symlink_to(path)
    return name


# (how the path is given, the command line, the configuration file's text): `{p}` is the path.
OPTIONS = {
    "--baseline": (["scan", ".", "--baseline", "{p}"], None),
    "--config": (["scan", ".", "--config", "{p}"], None),
    "--output": (["scan", ".", "--output", "json={p}"], None),
    "--write-baseline": (["scan", ".", "--write-baseline", "{p}"], None),
    "--policies": (["scan", ".", "--policies", "{p}"], None),
    "--ci-config": (["scan", ".", "--ci-config", "{p}"], None),
    "--stdin-filename": (["scan", "-", "--stdin-filename", "{p}"], None),
    "config baseline": (["scan", "."], "baseline: {p}\n"),
    "config ci_config_path": (["scan", "."], "ci_config_path: {p}\n"),
    "comment --report": (["comment", "--report", "{p}", "--dry-run"], None),
    "comment --base-report": (["comment", "--report", "report.json", "--base-report", "{p}", "--dry-run"], None),
    "fix --config": (["fix", ".", "--config", "{p}", "--diff"], None),
    "allowlist --output": (["allowlist", "--gitlab", "http://127.0.0.1:9", "--group", "g", "-o", "{p}"], None),
}


# Where sunset cannot run and must say so (exit 2): a file it reads that is not a readable regular file,
# a file it writes that cannot be written.
_UNREADABLE = ("fifo", "dev-zero", "dev-full", "folder", "dangling", "missing", "symlink-loop")
_UNWRITABLE = ("fifo", "dev-full", "folder", "symlink-loop")
REFUSED = {
    "--baseline": _UNREADABLE, "--config": _UNREADABLE, "comment --report": _UNREADABLE,
    "comment --base-report": _UNREADABLE, "fix --config": _UNREADABLE,
    "config baseline": (*_UNREADABLE, "symlink-out"),
    "--policies": ("fifo", "dev-zero", "dev-full", "dangling", "missing", "symlink-loop"),
    "--output": _UNWRITABLE, "--write-baseline": _UNWRITABLE,
}


def _in_process(argv: list[str], cwd: Path, stdin: str) -> tuple[int, str, str]:
    """`sunset ARGV` in this process, in a thread: a hang (a FIFO waited on) fails the test after 60 s
    instead of stopping the run."""
    result: dict[str, Any] = {}

    def run() -> None:
        raw_out, raw_err = io.BytesIO(), io.BytesIO()
        out, err = io.TextIOWrapper(raw_out, encoding="utf-8"), io.TextIOWrapper(raw_err, encoding="utf-8")
        saved = sys.stdout, sys.stderr, sys.stdin
        sys.stdout, sys.stderr = out, err
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode()), encoding="utf-8")
        try:
            result["code"] = main(argv)
        except SystemExit as exc:
            result["code"] = exc.code
        finally:
            sys.stdout, sys.stderr, sys.stdin = saved
            out.flush()
            err.flush()
            result["out"], result["err"] = raw_out.getvalue().decode(), raw_err.getvalue().decode()

    saved_cwd = os.getcwd()
    os.chdir(cwd)
    try:
        worker = threading.Thread(target=run, daemon=True)
        worker.start()
        worker.join(60)
        assert not worker.is_alive(), f"sunset {' '.join(argv)} hangs"
    finally:
        os.chdir(saved_cwd)
    return result["code"], result["out"], result["err"]


def _repo(root: Path) -> None:
    (root / ".git").mkdir(parents=True)
    (root / ".gitlab-ci.yml").write_text(JWT_JOB, encoding="utf-8")
    report = {"version": 1, "tool": {"name": "sunset", "version": "0"}, "target": "19.0", "findings": [],
              "errors": [], "warnings": [], "includes": [], "summary": {}}
    (root / "report.json").write_text(json.dumps(report), encoding="utf-8")


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(option=st.sampled_from(sorted(OPTIONS)), kind=st.sampled_from(SPECIALS), absolute=st.booleans())
def test_every_option_naming_a_special_file(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch,
                                           option: str, kind: str, absolute: bool) -> None:
    root = tmp_path_factory.mktemp("o") / "repo"
    _repo(root)
    name = _special(root, kind)
    given_path = str(root / name) if absolute else name
    argv_template, config = OPTIONS[option]
    argv = [a.replace("{p}", given_path) for a in argv_template]
    if config is not None:
        (root / ".sunset.yml").write_text(config.replace("{p}", json.dumps(given_path)), encoding="utf-8")
    monkeypatch.setenv("SUNSET_GITLAB_TOKEN", "glpat-fuzz-not-a-token-00")
    code, out, err = _in_process([*argv, "--format", "json"] if argv[0] == "scan" else argv, root, JWT_JOB)
    for text in (out, err):
        assert "Traceback" not in text and "internal error" not in text, (option, kind, text)
    assert code in (0, 1, 2), (option, kind, code, err)
    if kind in REFUSED.get(option, ()):
        assert code == 2, (option, kind, code, out[-300:], err)
    if code == 2:  # sunset could not run: one line that says so
        assert err.count("\n") == 1 and err.startswith("sunset"), (option, kind, err)
    elif argv[0] == "scan" and out.startswith("{"):
        json.loads(out)  # a whole report, whatever the option made of the file
