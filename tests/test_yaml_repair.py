"""YAML read past its broken lines (scanner.readers.yamlrepair): one broken spot is one input error naming
its line, and every finding of the rest of the file is still reported at its own line and column."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scanner.readers.yamldoc import YamlError, load_yaml
from scanner.readers.yamlrepair import read_yaml
from scanner.rules.policy import Policy

from conftest import assert_positions_inside, run_scan, where

# A source install's gitlab.yml as Docker images template it, with one sequence item indented one
# column too far (the way sameersbn/docker-gitlab's 2020 file was): libyaml refuses the whole file.
GITLAB_YML = """\
production: &base
  gitlab:
    host: {{GITLAB_HOST}}
  artifacts:
    object_store:
      enabled: {{GITLAB_ARTIFACTS_OBJECT_STORE_ENABLED}}
      background_upload: false
  incoming_email:
    enabled: true
    address: "incoming+%{key}@example.com"
  omniauth:
    providers:
      - { name: 'cas3',
          label: '{{OAUTH_CAS3_LABEL}}',
          args: {
                  url: '{{OAUTH_CAS3_SERVER}}'} }
       - { name: 'authentiq',
          app_id: '{{OAUTH_AUTHENTIQ_CLIENT_ID}}',
          args: { scope: {{OAUTH_AUTHENTIQ_SCOPE}} } }
      - { name: 'facebook',
          app_id: '{{OAUTH_FACEBOOK_API_KEY}}' }
      - { name: 'twitter', app_id: 'x' }
  backup:
    pg_schema: {{GITLAB_BACKUP_PG_SCHEMA}}
  pseudonymizer:
    manifest: config/pseudonymizer.yml
"""


def test_one_misindented_item_is_read_with_a_notice_naming_its_line(tmp_path: Path, policies: list[Policy]) -> None:
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "gitlab.yml").write_text(GITLAB_YML, encoding="utf-8")
    report = run_scan([tmp_path], policies)
    assert report.errors == []
    assert [(w.path, w.line, w.message) for w in report.warnings] == [
        ("config/gitlab.yml", 17, "YAML: the list item on line 17 has its `-` at column 8, its list's at column 7 "
         "(line 13); read as an item of that list")]
    assert where(report) == {
        ("object-storage-background-upload", "config/gitlab.yml", 7, 7),
        ("mail-sidekiq-delivery-method", "config/gitlab.yml", 8, 3),
        ("omniauth-cas3-provider", "config/gitlab.yml", 13, 11),
        ("omniauth-authentiq-provider", "config/gitlab.yml", 17, 12),
        ("omniauth-removed-providers", "config/gitlab.yml", 20, 11),
        ("omniauth-removed-providers", "config/gitlab.yml", 22, 11),
        ("backup-pg-schema", "config/gitlab.yml", 24, 5),
        ("omnibus-pseudonymizer", "config/gitlab.yml", 25, 3),
    }


@pytest.mark.parametrize(("text", "roots", "notices"), [
    # one column too deep, in flow style (the form of GITLAB_YML above)
    ("p:\n  - {a: 1}\n   - {b: 2,\n      c: 3}\n  - {d: 4}\n",
     [{"p": [{"a": 1}, {"b": 2, "c": 3}, {"d": 4}]}], [3]),
    # two columns too deep, a block mapping whose next key sits under the item's content
    ("p:\n  - a: 1\n    - b: 2\n      c: 3\n  - d: 4\n", [{"p": [{"a": 1}, {"b": 2, "c": 3}, {"d": 4}]}], [3]),
    # two items off in one list: each read, each named
    ("p:\n  - x\n  - {a: 1}\n   - {b: 2}\n  - {c: 3}\n   - {d: 4}\n",
     [{"p": ["x", {"a": 1}, {"b": 2}, {"c": 3}, {"d": 4}]}], [4, 6]),
])
def test_a_list_item_off_its_list_s_column_is_read_and_named(text: str, roots: list[Any], notices: list[int]) -> None:
    tree = read_yaml(text)
    assert tree.warnings == []
    assert (tree.roots, [line for line, _ in tree.notices]) == (roots, notices)
    assert all("read as an item of that list" in message for _, message in tree.notices)


def test_the_moved_item_keeps_the_columns_of_its_line() -> None:
    tree = read_yaml("p:\n  - {a: 1}\n   - {name: authentiq, b: 2}\n")
    item = tree.roots[0]["p"][1]
    assert tree.table[id(item)]["name"] == ((3, 7, 3, 11), (3, 13, 3, 22))
    assert tree.table[id(tree.roots[0]["p"])][1] == (3, 6, 3, 29)


@pytest.mark.parametrize(("text", "roots", "warnings"), [
    # shallower than its list, where a key of the mapping above was expected: which list is meant is
    # not certain, so it is blanked as before
    ("p:\n  - a: 1\n -  b: 2\n    c: 3\n  - d: 4\n", [{"p": [{"a": 1}]}],
     [(3, "invalid YAML: while parsing a block mapping did not find expected key (lines 3–5 not read)")]),
    # another list begins between the context and the item: it may belong to either
    ("- x:\n   - a\n  - b\n   - c\n", [[{"x": ["a"]}]],
     [(3, "invalid YAML: while parsing a block mapping did not find expected key (lines 3–4 not read)")]),
    ("p:\n  - a:\n      - x\n   - b\n", [{"p": [{"a": ["x"]}]}],
     [(4, "invalid YAML: while parsing a block collection did not find expected '-' indicator (line 4 not read)")]),
    # moved, the item is still broken: put back and blanked, no notice
    ("p:\n  - {a: 1}\n   - {b: 2} ]\n  - {d: 4}\n", [{"p": [{"a": 1}, {"d": 4}]}],
     [(3, "invalid YAML: while parsing a block collection did not find expected '-' indicator (line 3 not read)")]),
    # broken in a way the move does not reach (an unclosed flow on the moved line): blanked, no notice
    ("p:\n  - {a: 1}\n   - {b: [2}\n  - {d: 4}\n", [{"p": [{"a": 1}, {"d": 4}]}],
     [(3, "invalid YAML: while parsing a block collection did not find expected '-' indicator (line 3 not read)")]),
])
def test_an_item_the_move_cannot_read_is_one_problem_as_before(text: str, roots: list[Any],
                                                               warnings: list[tuple[int, str]]) -> None:
    tree = read_yaml(text)
    assert (tree.roots, tree.warnings, tree.notices) == (roots, warnings, [])


_ITEMS = st.lists(st.fixed_dictionaries({"name": st.sampled_from(["cas3", "authentiq", "facebook", "github"]),
                                         "n": st.integers(0, 99)}), min_size=2, max_size=8)


@given(items=_ITEMS, off=st.integers(0, 7), by=st.integers(1, 4), flow=st.booleans())
def test_any_one_item_pushed_deeper_reads_as_the_straight_list(items: list[dict[str, Any]], off: int, by: int,
                                                              flow: bool) -> None:
    """A list of providers, one item after the first (which sets the list's column) pushed `by` columns
    right: the same list, one notice, on that item's line. In block style at most up to the key column of
    the item before (further right, the line continues that item's last plain scalar: another error)."""
    by = by if flow else min(by, 2)
    def item(i: int, d: dict[str, Any]) -> str:
        dash = " " * (4 + (by if i == moved else 0)) + "- "
        return (dash + f"{{ name: '{d['name']}',\n        n: {d['n']} }}\n" if flow
                else dash + f"name: {d['name']}\n" + " " * (len(dash)) + f"n: {d['n']}\n")
    moved = 1 + off % (len(items) - 1)
    text = "production:\n  providers:\n" + "".join(item(i, d) for i, d in enumerate(items)) + "  other: 1\n"
    tree = read_yaml(text)
    assert tree.warnings == []
    assert tree.roots == [{"production": {"providers": items, "other": 1}}]
    [(line, _)] = tree.notices
    assert line == 3 + 2 * moved
    assert_positions_inside(tree, len(text.splitlines()) + 1)


def test_a_broken_pipeline_still_reports_its_other_jobs(tmp_path: Path, policies: list[Policy]) -> None:
    (tmp_path / ".gitlab-ci.yml").write_text(
        "build:\n  script: make\n  when manual\n  tags: [windows-1809]\n"   # 3: a key without `:`
        "test:\n  script: 'make test\n"                                   # 6: a quote never closed
        "deploy:\n  tags: [shared-windows]\n  script: make deploy\n", encoding="utf-8")
    report = run_scan([tmp_path], policies)
    assert [(e.line, e.message) for e in report.errors] == [
        (3, "invalid YAML: while scanning a simple key could not find expected ':' (line 3 not read)"),
        (6, "invalid YAML: while scanning a quoted scalar found unexpected end of stream (line 6 not read)"),
    ]
    assert where(report) == {("saas-windows-2019-tags", ".gitlab-ci.yml", 4, 10),
                             ("saas-windows-2019-tags", ".gitlab-ci.yml", 8, 10)}


@pytest.mark.parametrize(("text", "roots", "warnings"), [
    ("a: 1\nb:\n\tc: 2\nd: 3\n", [{"a": 1, "b": None, "d": 3}],
     [(3, "invalid YAML: while scanning for the next token found character that cannot start any token "
          "(line 3 not read)")]),
    ("a:\n  b: 1\n c: 2\n  d: 3\ne: 4\n", [{"a": {"b": 1}, "e": 4}],
     [(3, "invalid YAML: while parsing a block mapping did not find expected key (lines 3–4 not read)")]),
    ("a: [1, 2\nb: 3\n", [{"b": 3}],
     [(1, "invalid YAML: while parsing a flow sequence did not find expected ',' or ']' (line 1 not read)")]),
    ("a: *nowhere\nb: 2\n", [{"b": 2}], [(1, "invalid YAML: found undefined alias (line 1 not read)")]),
    ("a: 1\nb: x\x01y\x02\nc: 3\n", [{"a": 1, "b": "x y", "c": 3}],
     [(2, "invalid YAML: 2 control character(s), read as spaces")]),
    ("a: 1\r\nb: 'x\r\nc: 3\r\n", [{"a": 1, "c": 3}],
     [(2, "invalid YAML: while scanning a quoted scalar found unexpected end of stream (line 2 not read)")]),
    # U+2028 and NEL end no line in the line model (scanner.core.lines), though libyaml counts them (and
    # folds a NEL in a quoted scalar, as GitLab's parser does)
    ("a: \"x\u2028y\x85z\"\nb: 'x\nc: 3\n", [{"a": "x\u2028y z", "c": 3}],
     [(2, "invalid YAML: while scanning a quoted scalar found unexpected end of stream (line 2 not read)")]),
])
def test_each_broken_spot_is_one_problem(text: str, roots: list[Any], warnings: list[tuple[int, str]]) -> None:
    tree = read_yaml(text)
    assert (tree.roots, tree.warnings) == (roots, warnings)


def test_positions_after_a_broken_spot_are_exact() -> None:
    tree = read_yaml("a: 'open\nlist:\n  - x\n  - key: value\n")
    root = tree.roots[0]
    assert root == {"list": ["x", {"key": "value"}]}
    assert tree.table[id(root)]["list"][0] == (2, 1, 2, 5)
    item = root["list"][1]
    assert tree.table[id(item)]["key"] == ((4, 5, 4, 8), (4, 10, 4, 15))


def test_text_that_parses_is_read_as_before() -> None:
    text = "a: &x {b: 1}\nc:\n  <<: *x\n  d: [e:f]\n"
    assert read_yaml(text).roots == load_yaml(text).roots
    assert read_yaml(text).warnings == []


def test_nesting_past_the_limit_is_still_refused() -> None:
    with pytest.raises(YamlError, match="nested deeper than 100"):
        read_yaml("ok: 1\nbad: " + "[" * 101 + "]" * 101 + "\n")


def test_many_broken_spots_stop_with_one_problem_for_the_rest() -> None:
    """Reading stays bounded: after the last repair the rest of the file is one problem."""
    text = "".join(f"k{i}: 1\n\tbad{i}\n" if i % 2 else f"k{i}: 1\n" for i in range(40_000))
    started = time.monotonic()
    tree = read_yaml(text)
    assert time.monotonic() - started < 30  # a hang guard, not a speed test (bench/ measures)
    assert tree.warnings[-1][1].endswith("(too many broken spots: line "
                                         f"{tree.warnings[-1][0]} and the rest of the file not read)")
    assert len(tree.warnings) <= 17
    assert tree.roots[0]["k0"] == 1


_PIECES = ["a: ", "- ", "  ", "\n", "\t", "'", '"', "{", "}", "[", "]", ",", ":", "&x ", "*x", "<<: *x",
           "#", "|\n", "? ", "---\n", "\x01", "\r\n", "\u2028", "b", "key: value\n", "{{X}}", "<% y %>"]


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(text=st.one_of(st.text(max_size=200), st.lists(st.sampled_from(_PIECES), max_size=50).map("".join)))
def test_any_text_gives_a_tree_or_one_yaml_error(text: str) -> None:
    from scanner.readers.settings.templated import load_templated_yaml

    for read in (read_yaml, load_templated_yaml):
        try:
            tree = read(text)
        except YamlError as exc:
            assert exc.line is None or exc.line >= 1
            continue
        assert_positions_inside(tree, len(text.splitlines()) + 1 + text.count("\r") + text.count("\x85"))
