"""Property: every document kind's parser, on random and hostile text, returns a Tree or raises a
ParseError — never another exception; and one hostile file never hides its neighbour's findings."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scanner.core.tree import ParseError, Tree
from scanner.rules.documents import KINDS
from tests.conftest import run_scan, where

FAST = settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

_PIECES = ["[", "]", "{", "}", "- ", "? ", ": ", "a: ", "\n", "\r", "\r\n", "\x00", "  ", "\t", "&x ", "*x",
           "<<: *x", "!t ", "'", '"', "#", "|\n", ">-\n", "---\n", "...\n", "<%= x %>", "{{ y }}", "{% if %}",
           "#{", "%w[", "\\", "\\U00110000", "\\UFFFFFFFF", "9" * 5000, "0x", "1e999", "\ud800", "\ufeff",
           "\u2028", "\x85", "gitlab_rails['a'] = ", "a = ", "[x]\n", "import requests\n", "/api/v4/",
           "requests.get(", "(", ")", "+", "FROM x\n", "ENV A=", "query {", "=", ",", "<<EOF\n", "EOF\n"]
_TEXT = st.one_of(
    st.text(max_size=300),
    st.lists(st.sampled_from(_PIECES), max_size=60).map("".join),
    st.tuples(st.sampled_from(["a: ", "x = ", "gitlab_rails['a'] = ", "- ", "a = ", "requests.get("]),
              st.sampled_from(["[", "{", "{b = ", "{a: ", '"#{', "- ", "(", "f(", "1+", "-"]),
              st.integers(min_value=90, max_value=3000)).map(lambda t: t[0] + t[1] * t[2]),
)


def _parses_or_fails_cleanly(kind: str, text: str) -> None:
    try:
        tree = KINDS[kind].parse(text)
    except ParseError as exc:
        assert isinstance(exc.message, str) and (exc.line is None or exc.line >= 1)
        return
    assert isinstance(tree, Tree)


@pytest.mark.parametrize("kind", list(KINDS))
@FAST
@given(text=_TEXT)
def test_every_parser_returns_a_tree_or_a_parse_error(kind: str, text: str) -> None:
    _parses_or_fails_cleanly(kind, text)


_FILES = {"omnibus-config": "gitlab.rb", "gitlab-yml": "config/gitlab.yml", "runner-config": "config.toml",
          "python-source": "tool.py", "helm-values": "values.yaml", "compose": "docker-compose.yml",
          "dockerfile": "Dockerfile", "env-file": ".env", "shell-script": "deploy.sh", "js-source": "x.js",
          "ruby-source": "x.rb", "terraform": "main.tf", "graphql": "q.graphql",
          "java-properties": "project/build.properties", "prometheus-rules": "rules/gitlab.rules.yml",
          "text-file": "app/App.csproj"}
_BAD_CI = "include:\n  - template: Terraform.gitlab-ci.yml\n"


@settings(suppress_health_check=list(HealthCheck))
@given(kind=st.sampled_from(sorted(_FILES)), text=_TEXT)
def test_a_hostile_file_never_hides_its_neighbours_findings(policies: list, kind: str, text: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / ".gitlab-ci.yml").write_text(_BAD_CI)
        hostile = root / _FILES[kind]
        hostile.parent.mkdir(parents=True, exist_ok=True)
        hostile.write_text(text, encoding="utf-8", errors="surrogatepass")
        report = run_scan([root], policies)
    assert ("terraform-templates", ".gitlab-ci.yml", 2, 15) in where(report)
