"""Issue 27, every pattern linear: every policy pattern runs on RE2, the catalog's and the ones users
add with `--policies`; a pattern RE2 cannot compile (a lookahead, a backreference) is refused when
the policy is loaded, saying where and why. Each pattern of the catalog also runs over adversarial
input built for it — long runs of each character class it repeats, of its own words, and of its
words joined by the separators URLs and paths use — within a generous budget (a hang catcher; it
measures nothing). The patterns rewritten without lookaround find what their lookaround forms
found, on random input made of their own words.
"""

from __future__ import annotations

import dataclasses
import re
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scanner.cli import main
from scanner.rules import any_of, spec
from scanner.rules import text as text_rule
from scanner.rules.catalog import builtin_policy_dir, load_policies
from scanner.rules.ci_variable import CiVariableMatcher
from scanner.rules.policy import Policy

from conftest import examples, sunset

ROOT = Path(__file__).resolve().parent.parent
N = 20_000
BUDGET_S = 10.0
_CLASSES = ["a", "A", "0", "-", ".", "/", ":", "_", " ", "$", "{", "@", "=", "?", "&", '"', "'", "\\", "a/", "a.",
            "a-", "${", "/-/", "://", "a1", "\t"]


def _patterns() -> dict[Any, str]:
    """Every pattern compiled into the catalog (a policy's `spec.Regex`, or a `re.Pattern` a matcher
    builds from names), with the id of a policy using it."""
    found: dict[Any, str] = {}

    def walk(node: Any, pid: str, depth: int = 0) -> None:
        if depth > 8:
            return
        if isinstance(node, spec.Regex | re.Pattern):
            found.setdefault(node, pid)
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
        for hint in policy.data.hints:
            for text in (hint.route, hint.match):
                if text is not None:
                    found.setdefault(spec.regex(text), policy.id)
    return found


PATTERNS = _patterns()
ORDER = sorted(PATTERNS, key=lambda p: (PATTERNS[p], p.pattern))


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


def test_every_policy_pattern_runs_on_re2() -> None:
    """The policies' own patterns (text, value tests, replacement cases) are RE2 objects; only the
    patterns matchers build from validated names (a variable's name then one character class) are not."""
    engines = {type(p.compiled).__module__.split(".")[0] for p in PATTERNS if isinstance(p, spec.Regex)}
    assert engines == {"re2"}


@pytest.mark.parametrize("pattern", ORDER, ids=[PATTERNS[p] for p in ORDER])
def test_each_pattern_is_linear_on_input_built_for_it(pattern: Any) -> None:
    started = time.monotonic()
    for text in adversarial(pattern.pattern):
        for _ in pattern.finditer(text):
            pass
        assert time.monotonic() - started < BUDGET_S, (PATTERNS[pattern], text[:40])


# ------------------------------------------------------------- the catalog's rewrites without lookaround

# The forms the catalog used with lookarounds, as the specification of what the RE2 forms must find
# (the legacy URLs' with a few of their page words: the random text below uses no others). ASCII
# only: RE2's `\w`, `\s` and `\b` are ASCII, Python's Unicode.
LOOKAROUND = {
    "jwks-instance-endpoint": r"/-/jwks(?![\w/-])",
    "dependency-scanning-sbom-legacy-properties":
        r"gitlab:dependency_scanning:(?:input_file|package_manager)(?![:\w])",
    "oauth-implicit-grant": r"""oauth/authorize\?[^\s"'`<>]*?\bresponse_type=token(?![\w-])""",
    "ci-job-token-base64": r"""\$\{?CI_JOB_TOKEN\}?"?\s*\|\s*base64\b(?![^\n|;&]*(?:-w\s*0|--wrap[= ]0))""",
    "legacy-urls-without-delimiter": (
        r"""(?:https?://(?!docs\.|about\.|registry\.|[\w.-]*\.gitlab\.io[:/])(?=[\w.-]*gitlab)[\w.-]+(?::\d+)?/"""
        r"""(?!api/|groups/|help/|v2/|-/)(?:(?!-/)[\w.%-]+/){2,}?(?:tags|commits|issues|pipelines|runners)"""
        r"""|\$\{?CI_PROJECT_URL\}?/(?:tags|commits|issues|pipelines|runners)"""
        r"""|https?://(?!docs\.|about\.|registry\.|[\w.-]*\.gitlab\.io[:/])(?=[\w.-]*gitlab)[\w.-]+(?::\d+)?/groups/"""
        r"""(?:(?!-/)[\w.%-]+/)+?(?:labels|issues|projects))(?=[/?#"'`\s)\]]|$)"""),
}
WORDS = {
    "jwks-instance-endpoint": ["/-/jwks", "/", "-", "a", " ", "\n", "_", "."],
    "dependency-scanning-sbom-legacy-properties": [
        "gitlab:dependency_scanning:input_file", "gitlab:dependency_scanning:package_manager", ":", "a", " ",
        "path", "\n", "-"],
    "oauth-implicit-grant": ["oauth/authorize?", "response_type=token", "&", "_", "-", "a", " ", '"', "x=y", "\n"],
    "ci-job-token-base64": ["$CI_JOB_TOKEN", "${CI_JOB_TOKEN}", '"', " | ", "|", "base64", " -w", "0", " --wrap",
                            "=", " ", "-", "w", ";", "\t", "\n", "-d", "x", "&"],
    "legacy-urls-without-delimiter": [
        "https://", "http://", "gitlab.com", "docs.", "about.", "registry.", "x.gitlab.io", "gitlab", ":8080", "/",
        "groups/", "api/", "help/", "v2/", "-/", "-", "g", "p", "issues", "pipelines", "labels", "projects",
        "$CI_PROJECT_URL", "${CI_PROJECT_URL}", '"', " ", "?", ".", "%", "\n"],
}


@pytest.fixture(scope="module")
def catalog() -> dict[str, Policy]:
    return {p.id: p for p in load_policies([builtin_policy_dir()])}


def _reported(policy: Policy, text: str) -> list[tuple[int, int]]:
    """The spans the policy's text matchers report in `text` (the group `match`, `unless` applied)."""
    spans: set[tuple[int, int]] = set()
    for leaf in any_of.leaves(policy.matcher):
        assert isinstance(leaf, text_rule.TextMatcher)
        for start, end, shown, shown_end in leaf.regex.finditer(text):
            if leaf.unless is None or not leaf.unless.search(text[start:end]):
                spans.add((shown, shown_end))
    return sorted(spans)


@pytest.mark.parametrize("pid", sorted(LOOKAROUND))
@settings(max_examples=examples(300), deadline=None, derandomize=True)
@given(data=st.data())
def test_rewritten_patterns_find_what_their_lookaround_forms_found(catalog: dict[str, Policy], pid: str,
                                                                   data: st.DataObject) -> None:
    text = "".join(data.draw(st.lists(st.sampled_from(WORDS[pid]), min_size=1, max_size=16)))
    expected = [m.span() for m in re.finditer(LOOKAROUND[pid], text)]
    assert _reported(catalog[pid], text) == expected, text


@settings(max_examples=examples(500), deadline=None, derandomize=True)
@given(value=st.text(alphabet="true1$x0 TRUE", max_size=7))
def test_security_scan_values_without_lookahead(catalog: dict[str, Policy], value: str) -> None:
    """Any value but "true", "1", a variable or nothing (the lookahead form `^(?!true$|1$|\\$).`)."""
    matcher = catalog["security-scan-disabled-values"].matcher
    assert isinstance(matcher, any_of.AnyOfMatcher)
    variable = matcher.matchers[0]
    assert isinstance(variable, CiVariableMatcher) and variable.value is not None
    assert variable.value.accepts(value) == bool(re.search(r"^(?!true$|1$|\$).", value)), value


# ------------------------------------------------------------- users' patterns


POLICY = """\
title: "A test policy of its own"
summary: s
message: "found `{{match}}`"
rationale: r
remediation: r
breaking: true
origin: gitlab
references:
  - title: t
    url: https://docs.gitlab.com/
applies_to: [shell-script]
match:
{match}
example:
  before: b
  after: a
"""


def _policy_dir(tmp_path: Path, match: str, extra: str = "") -> Path:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "my-policy.yaml").write_text(POLICY.format(match=match) + extra, encoding="utf-8")
    return folder


REFUSED = "is not RE2 syntax ({why}); sunset runs policy patterns with RE2, whose syntax guarantees matching in " \
          "time linear in the text: no lookahead or lookbehind, no backreferences\n"


@pytest.mark.parametrize(("match", "extra", "said"), [
    ('  kind: text\n  regex: "/-/jwks(?![\\\\w/-])"', "",
     "14: match: regex: '/-/jwks(?![\\\\w/-])' " + REFUSED.format(why="invalid perl operator: (?!")),
    ('  kind: text\n  regex: "(a+)\\\\1"', "",
     "14: match: regex: '(a+)\\\\1' " + REFUSED.format(why="invalid escape sequence: \\1")),
    ("  kind: text\n  regex: token\n  unless: '(?<=x)y'", "",
     "15: match: unless: '(?<=x)y' " + REFUSED.format(why="invalid perl operator: (?<=")),
    ("  kind: any-of\n  matchers:\n    - {kind: text, regex: a}\n"
     "    - {kind: ci-variable, names: [X], value: {regex: '^(?!true)'}}", "",
     "16: match: matchers.1.value.regex: '^(?!true)' " + REFUSED.format(why="invalid perl operator: (?!")),
    ("  kind: text\n  regex: token", "replacement:\n  - text: x\n    match: '(?=a)'\n",
     "20: replacement.0.match: Value error, '(?=a)' " + REFUSED.format(why="invalid perl operator: (?=")),
])
def test_a_pattern_re2_cannot_compile_is_refused_at_load(tmp_path: Path, match: str, extra: str, said: str,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    mine = _policy_dir(tmp_path, match, extra)
    (tmp_path / "x.sh").write_text("echo token\n", encoding="utf-8")
    assert main(["scan", str(tmp_path / "x.sh"), "--policies", str(mine)]) == 2
    assert capsys.readouterr().err == f"sunset: {mine}/my-policy.yaml:{said}"


def test_a_users_pattern_that_would_backtrack_runs_in_linear_time(tmp_path: Path) -> None:
    """`(x+x+)+y` takes 2^n steps under a backtracking engine on `xxxx…` without a `y`; under RE2 the
    scan of a 200 KB line of it ends well within the budget, and the pattern still finds its text."""
    mine = _policy_dir(tmp_path, '  kind: text\n  regex: "(x+x+)+y"')
    (tmp_path / "x.sh").write_text("echo " + "x" * 200_000 + "\necho xxy\n", encoding="utf-8")
    # in a process with a deadline: a pattern that backtracks fails the test, not the run
    done = sunset("scan", tmp_path / "x.sh", "--policies", mine, "--select", "my-policy", "--format", "concise",
                  cwd=ROOT, process=True, timeout=60)
    assert (done.returncode, done.stderr) == (1, "")
    assert done.stdout.splitlines()[0] == "x.sh:2:6: warning[my-policy] found `xxy`"


def test_context_around_the_group_match_and_unless(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """What a lookahead said, written as context: the finding is the group `match`; a match in
    which `unless` is found is not reported."""
    mine = _policy_dir(tmp_path, "  kind: text\n  regex: '(?P<match>token)(?:[^\\w]|$)[^;\\n]*'\n  unless: 'safe'")
    (tmp_path / "x.sh").write_text("echo token now\necho tokens\necho token is safe; echo token\n", encoding="utf-8")
    main(["scan", str(tmp_path / "x.sh"), "--policies", str(mine), "--select", "my-policy", "--format", "concise",
          "--fail-on", "never"])
    out = capsys.readouterr().out.splitlines()
    assert [line for line in out if "my-policy" in line] == [
        "x.sh:1:6: warning[my-policy] found `token`",
        "x.sh:3:26: warning[my-policy] found `token`",
    ]


@pytest.mark.parametrize("text", ["héllo wörld token ✓", "\U0001f600 token", "a\u2028token"])
def test_offsets_are_characters_not_bytes(text: str) -> None:
    """RE2 matches UTF-8 bytes; the spans a pattern gives are character offsets of the text."""
    regex = spec.compile_regex("(?P<match>tok)en")
    [(start, end, shown, shown_end)] = list(regex.finditer(text))
    assert (text[start:end], text[shown:shown_end]) == ("token", "tok")


def test_a_lone_surrogate_is_matched_not_a_crash() -> None:
    """A YAML or JSON escape can put a lone surrogate in a value; RE2 reads it as U+FFFD."""
    assert spec.compile_regex("^v[0-9]").search("v1\udcff") and not spec.compile_regex("x").search("\ud800")
    [(start, end, _, _)] = list(spec.compile_regex("b+").finditer("a\ud800bb"))
    assert (start, end) == (2, 4)
