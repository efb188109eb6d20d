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


def test_one_misindented_line_hides_nothing_else(tmp_path: Path, policies: list[Policy]) -> None:
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "gitlab.yml").write_text(GITLAB_YML, encoding="utf-8")
    report = run_scan([tmp_path], policies)
    assert [(e.path, e.line, e.message) for e in report.errors] == [
        ("config/gitlab.yml", 17, "invalid YAML: while parsing a block collection did not find expected '-' "
         "indicator (lines 17–19 not read)")]
    assert where(report) == {
        ("object-storage-background-upload", "config/gitlab.yml", 7, 7),
        ("mail-sidekiq-delivery-method", "config/gitlab.yml", 8, 3),
        ("omniauth-cas3-provider", "config/gitlab.yml", 13, 11),
        ("omniauth-removed-providers", "config/gitlab.yml", 20, 11),
        ("omniauth-removed-providers", "config/gitlab.yml", 22, 11),
        ("backup-pg-schema", "config/gitlab.yml", 24, 5),
        ("omnibus-pseudonymizer", "config/gitlab.yml", 25, 3),
    }


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
