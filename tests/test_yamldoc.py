"""The YAML layer: positions for every key and value, tags kept, aliases shared, limits enforced."""

from __future__ import annotations

import time

import pytest

from scanner.core.tree import Tagged
from scanner.readers.yamldoc import MAX_DEPTH, YamlError, load_yaml

SOURCE = """\
.setup: &setup
  image: ruby:3.3
  variables:
    A: "1"
job:
  <<: *setup
  script:
    - !reference [.prepare, script]
    - echo done
  tags: [docker, linux]
"""


def test_positions_of_keys_and_values_are_one_based() -> None:
    doc = load_yaml(SOURCE)
    root = doc.roots[0]
    job_spans = doc.table[id(root["job"])]
    assert job_spans["script"][0] == (7, 3, 7, 9)  # key `script`
    script_spans = doc.table[id(root["job"]["script"])]
    assert script_spans[1] == (9, 7, 9, 16)  # `echo done`
    tag_spans = doc.table[id(root["job"]["tags"])]
    assert tag_spans == [(10, 10, 10, 16), (10, 18, 10, 23)]


def test_merge_key_shares_values_and_keeps_their_written_position() -> None:
    doc = load_yaml(SOURCE)
    root = doc.roots[0]
    assert root["job"]["variables"] is root[".setup"]["variables"]
    assert root["job"]["image"] == "ruby:3.3"
    # the merged key points at where it is written, inside `.setup`
    assert doc.table[id(root["job"])]["image"][0] == (2, 3, 2, 8)


def test_custom_tags_are_kept_not_errors() -> None:
    doc = load_yaml(SOURCE + "other: !unknown-tag {a: 1}\n")
    root = doc.roots[0]
    assert root["job"]["script"][0] == Tagged("!reference", [".prepare", "script"])
    assert root["other"] == Tagged("!unknown-tag", {"a": 1})


def test_multi_document_component_file() -> None:
    doc = load_yaml("spec:\n  inputs:\n    stage:\n      default: test\n---\nlint:\n  stage: $[[ inputs.stage ]]\n")
    assert [list(r) for r in doc.roots] == [["spec"], ["lint"]]
    assert doc.table[id(doc.roots[1])]["lint"][0] == (6, 1, 6, 5)


def test_alias_bomb_costs_its_source_size_not_its_expansion() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 12)]
    started = time.process_time()
    doc = load_yaml("\n".join(lines) + "\n")
    elapsed = time.process_time() - started
    assert doc.roots[0]["a11"][0] is doc.roots[0]["a10"]  # shared, never copied (10**12 leaves otherwise)
    assert elapsed < 2  # generous bound on CPU time; the expansion would never finish


def test_nesting_over_the_limit_is_an_error_with_position() -> None:
    with pytest.raises(YamlError) as err:
        load_yaml("a: " + "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5) + "\n")
    assert "nested deeper" in err.value.message
    assert err.value.line == 1


def test_extremely_deep_nesting_does_not_crash() -> None:
    with pytest.raises(YamlError) as err:
        load_yaml("a: " + "[" * 20000 + "]" * 20000)
    assert "nested deeper" in err.value.message


def test_malformed_yaml_reports_line_and_column() -> None:
    with pytest.raises(YamlError) as err:
        load_yaml("job:\n  script: [a, b\n  stage: test\n")
    assert err.value.line == 3
    assert err.value.message.startswith("invalid YAML")


def test_scalar_types_follow_yaml() -> None:
    doc = load_yaml("a: true\nb: 3\nc: ~\nd: '3'\ne: 1.5\n")
    assert doc.roots[0] == {"a": True, "b": 3, "c": None, "d": "3", "e": 1.5}


def test_colon_inside_a_flow_scalar_parses_as_gitlab_does() -> None:
    # libyaml refuses `[validate:terraform]`; GitLab (and YAML 1.2) read one string
    doc = load_yaml("lint:\n  needs: [validate:terraform, 'x:y', b]\n  script: [echo a:b]\n")
    job = doc.roots[0]["lint"]
    assert job["needs"] == ["validate:terraform", "x:y", "b"]
    assert job["script"] == ["echo a:b"]
    assert doc.table[id(job["needs"])][0] == (2, 11, 2, 29)

