"""YAML that a template engine fills in: ERB (`<%= … %>`), Mustache/Jinja (`{{VAR}}`, `{% … %}`).

Settings files such as a source install's `config/gitlab.yml` and `database.yml`, or a Docker
image's copy of them, are often templates. Each template expression is replaced by private-use
characters of the same length, so libyaml reads the text and every position stays exact; a
tag alone on its line that outputs nothing YAML can place (`<% if … %>`, `{% endif %}`,
`{{- end }}`) becomes blank. Afterwards each value or key that held an expression gets the
expression's text back in place of its placeholder: a value `{{IMAP_PORT}}` is the string
`"{{IMAP_PORT}}"`, present but never equal to a literal. A spot YAML cannot read on a line holding an
expression is one notice for the file (`scanner.readers.settings.untemplate.one_notice`).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterator
from typing import Any

from scanner.core.lines import LineIndex
from scanner.core.tree import Span, Tree
from scanner.readers.settings.untemplate import one_notice
from scanner.readers.yamlrepair import read_yaml

STANDINS = ("\ue001", "\ue002")  # alternated, so two expressions side by side stay two
_OPENER = re.compile(r"<%|\{\{|\{%")
_CLOSERS = {"<%": "%>", "{{": "}}", "{%": "%}"}
_WORD = re.compile(r"\S")
_LINE_END = re.compile(r"[^\S\n]*(?:\n|\Z)")  # blanks to the end of the line
_RUN = re.compile("\ue001+|\ue002+")
_BREAKS = "\r\n"  # kept inside a replaced expression: the line model's line ends
MARKERS = ("<%", "{{", "{%")


def is_templated(text: str) -> bool:
    return any(m in text for m in MARKERS)


def _tags(text: str) -> Iterator[tuple[int, int]]:
    """Each expression's start and end, left to right. An opener whose closer never comes is text; it
    is looked for once, so a thousand unclosed `{{` cost one scan, not a thousand."""
    missing: set[str] = set()
    i = 0
    while (m := _OPENER.search(text, i)) is not None:
        closer = _CLOSERS[m.group()]
        end = -1 if closer in missing else text.find(closer, m.end())
        if end < 0:
            missing.add(closer)
            i = m.start() + 1
            continue
        yield m.start(), end + len(closer)
        i = end + len(closer)


def _neutralize(text: str) -> tuple[str, list[tuple[int, str]]]:
    """The text with expressions replaced, and each replaced expression's offset and text (linear: each
    line's start is looked for once, and only the first expression of a line looks back at it)."""
    replaced: list[tuple[int, str]] = []
    out: list[str] = []
    at, line_start, written = 0, 0, False  # `written`: the line holds something before this expression
    for a, b in _tags(text):
        tag = text[a:b]
        nl = text.rfind("\n", at, a)
        if nl >= 0:
            line_start, written = nl + 1, False
        alone = not written and _WORD.search(text, line_start, a) is None and _LINE_END.match(text, b) is not None
        out.append(text[at:a])
        if alone and not tag.startswith("<%="):
            out.append("".join(c if c in _BREAKS else " " for c in tag))  # a control line: `<% if %>`, `{{- end }}`
        else:
            fill = STANDINS[len(replaced) % 2]
            replaced.append((a, tag))
            out.append("".join(c if c in _BREAKS else fill for c in tag))
        nl = tag.rfind("\n")
        if nl >= 0:
            line_start = a + nl + 1
        at, written = b, True
    out.append(text[at:])
    return "".join(out), replaced


def load_templated_yaml(text: str) -> Tree:
    """`scanner.readers.yamlrepair.read_yaml`, tolerating template expressions; positions stay exact."""
    if not is_templated(text):
        return read_yaml(text)
    neutral, replaced = _neutralize(text)
    tree = read_yaml(neutral)
    _Restorer(tree, text, replaced).run()
    one_notice(tree, "YAML", text)
    return tree


def _templated(value: Any) -> bool:
    return isinstance(value, str) and _RUN.search(value) is not None


class _Restorer:
    def __init__(self, tree: Tree, text: str, replaced: list[tuple[int, str]]) -> None:
        self.tree = tree
        self.starts = LineIndex(text).starts
        self.offsets = [off for off, _ in replaced]
        self.replaced = replaced
        self.seen: set[int] = set()

    def run(self) -> None:
        for n, root in enumerate(self.tree.roots):
            if _templated(root):
                self.tree.roots[n] = self.original(root, self.tree.root_spans[n])
            else:
                self.visit(root)

    def visit(self, value: Any) -> None:
        if id(value) in self.seen or not isinstance(value, (dict, list)):
            return
        self.seen.add(id(value))
        spans = self.tree.table.get(id(value))
        if spans is None:
            return
        if isinstance(value, list):
            for i, item in enumerate(value):
                if _templated(item):
                    value[i] = self.original(item, spans[i])
                self.visit(value[i])
            return
        if any(_templated(key) for key in value):
            self.rekey(value, spans)
        for key, item in value.items():
            if _templated(item):
                value[key] = self.original(item, spans[key][1])
            self.visit(value[key])

    def rekey(self, mapping: dict[str, Any], spans: dict[str, tuple[Span, Span]]) -> None:
        items = [(k, v, spans[k]) for k, v in mapping.items()]
        mapping.clear()
        spans.clear()
        for key, value, key_spans in items:
            if _templated(key):
                self.tree.keys.discard(key)
                key = self.original(key, key_spans[0])
                self.tree.keys.add(key)
            mapping[key] = value
            spans[key] = key_spans

    def original(self, value: str, span: Span) -> str:
        """The value with each replaced run put back as the expression written there."""
        last = len(self.starts) - 1
        a = self.starts[min(span[0] - 1, last)] + span[1] - 1
        b = self.starts[min(span[2] - 1, last)] + span[3] - 1
        lo = bisect_left(self.offsets, a)
        hi = bisect_left(self.offsets, b)
        texts = iter(tag for _, tag in self.replaced[lo:hi])
        return _RUN.sub(lambda m: next(texts, m.group(0)), value)
