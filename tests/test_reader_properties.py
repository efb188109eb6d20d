"""Properties of the settings readers this area changed, on any text: a tree or a ParseError, never another
exception; every position inside the text; recognition never raises (scanner.readers.settings)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scanner.core.tree import ParseError
from scanner.readers.settings.dockerfile import parse_dockerfile
from scanner.readers.settings.parsers import parse_compose, parse_helm_values, parse_terraform
from scanner.rules.documents import KINDS, claiming_kind

from conftest import assert_positions_inside

FAST = settings(suppress_health_check=[HealthCheck.too_slow])
_PIECES = ["FROM x\n", "ENV ", "ARG ", "RUN ", "A=1 ", 'B="x y" ', "'", '"', "\\\n", "\\", "# c\n", "<<EOF\n",
           "EOF\n", '["a", "b"]', "\n", " ", "\t", "=", "# escape=`\n", "`\n", "services:\n", "  gitlab:\n",
           "    image: gitlab/gitlab-ce\n", "runners:\n  config: |\n    [[runners]]\n", "{{ x }}", "\ufeff",
           'resource "helm_release" "r" {\n', 'chart = "gitlab-runner"\n', "set {\n", 'name = "a.b"\n', "}\n"]
_TEXT = st.one_of(st.text(max_size=200), st.lists(st.sampled_from(_PIECES), max_size=50).map("".join))


@FAST
@given(text=_TEXT)
def test_settings_readers_give_a_tree_with_positions_inside(text: str) -> None:
    lines = len(text.split("\n"))
    for parse in (parse_dockerfile, parse_compose, parse_helm_values, parse_terraform):
        try:
            tree = parse(text)
        except ParseError as exc:
            assert exc.line is None or 1 <= exc.line <= lines + text.count("\r") + text.count("\x85")
            continue
        assert_positions_inside(tree, lines + text.count("\r") + text.count("\x85") + text.count("\u2028"))


_NAMES = ["gitlab.rb", "gitlab.rb.j2", "config.toml", "runner-config.tpl", "values.yaml.gotmpl", "deploy.yaml",
          "docker-compose.yml.j2", "Dockerfile", ".env", "database.yml", "gitlab.yml.erb", "rules.yml", "x.tmpl"]


@settings(suppress_health_check=list(HealthCheck))
@given(name=st.sampled_from(_NAMES), data=st.binary(max_size=300) | _TEXT.map(lambda t: t.encode("utf-8", "replace")))
def test_recognition_never_raises(name: str, data: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder, "templates" if name.endswith(".yaml") else "etc", name)
        path.parent.mkdir()
        path.write_bytes(data)
        kind = claiming_kind(path)
        assert kind is None or KINDS[kind.name] is kind  # the property is that it returns at all
