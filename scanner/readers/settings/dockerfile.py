"""Dockerfiles and env files: the variables they set and the commands they run, with positions.

A Dockerfile becomes a list of instructions, each `{KEYWORD: arguments}`:

* `ENV A=1 B="x y"` and the legacy `ENV A value` → a mapping of names to values; `ARG` alike;
* `RUN`, `CMD`, `ENTRYPOINT` in exec form (`["a", "b"]`) → a list of strings; in shell form → the
  text as written, continuation lines included, so each word keeps its line and column;
* `FROM` → the image; anything else → its text.

Continuation lines (`\\`, or the character `# escape=` names) and comment lines inside them are
read as Docker reads them; a `RUN <<EOF` heredoc runs to its terminator line.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from typing import Any

from scanner.core.tree import ParseError, Span, Tree

_WORD = re.compile(r"""(?:[^\s"'\\]|\\.|"(?:[^"\\]|\\.)*"|'[^']*')+""", re.S)
_HEREDOC = re.compile(r"<<-?([\"']?)([A-Za-z_][A-Za-z0-9_]*)\1")
_ENV_LINE = re.compile(
    r"^(?P<lead>[ \t]*(?:export[ \t]+)?)(?P<name>[A-Za-z_][A-Za-z0-9_.]*)[ \t]*=[ \t]*(?P<value>.*)$"
)


def parse_dockerfile(text: str) -> Tree:
    lines = text.split("\n")
    if len(lines) > 1 and not lines[-1]:  # a final line end starts no line (`scanner.core.lines`)
        lines.pop()
    escape = "`" if re.match(r"#\s*escape\s*=\s*`", text) else "\\"
    root: list[Any] = []
    tree = Tree(roots=[root], root_spans=[(1, 1, len(lines), 1)])
    spans: list[Span] = []
    tree.table[id(root)] = spans
    n = 0
    while n < len(lines):
        stripped = lines[n].strip()
        if not stripped or stripped.startswith("#"):
            n += 1
            continue
        end = _instruction_end(lines, n, escape)
        _instruction(tree, root, lines, n, end)
        spans.append((n + 1, len(lines[n]) - len(lines[n].lstrip()) + 1, end + 1, len(lines[end]) + 1))
        n = end + 1
    return tree


def _instruction_end(lines: list[str], n: int, escape: str) -> int:
    """The index of the last line of the instruction starting at line n."""
    heredoc = _HEREDOC.search(lines[n]) if lines[n].lstrip()[:3].upper() in ("RUN", "COP", "ADD") else None
    end = n
    while lines[end].rstrip().endswith(escape) and end + 1 < len(lines):
        end += 1
        while end + 1 < len(lines) and lines[end].strip().startswith("#"):
            end += 1
    if heredoc:
        while end + 1 < len(lines) and lines[end].strip() != heredoc.group(2):
            end += 1
    return end


def _instruction(tree: Tree, root: list[Any], lines: list[str], n: int, end: int) -> None:
    first = lines[n]
    indent = len(first) - len(first.lstrip())
    keyword = first.split(None, 1)[0]
    kw = keyword.upper()
    args_col = indent + len(keyword)
    while args_col < len(first) and first[args_col] in " \t":
        args_col += 1
    text = "\n".join([first[args_col:], *lines[n + 1 : end + 1]])
    args_span: Span = (n + 1, args_col + 1, end + 1, len(lines[end]) + 1)
    value: Any = text
    if kw in ("ENV", "ARG"):
        value = _assignments(tree, text, n + 1, args_col + 1, kw == "ENV")
    elif kw in ("RUN", "CMD", "ENTRYPOINT") and text.lstrip().startswith("["):
        value = _exec_form(tree, text, n + 1, args_col + 1) or text
    elif kw == "FROM":
        words = [w for w in text.split() if not w.startswith("--")]
        value = words[0] if words else ""
    item = {kw: value}
    tree.table[id(item)] = {kw: ((n + 1, indent + 1, n + 1, indent + len(keyword) + 1), args_span)}
    tree.keys.add(kw)
    root.append(item)


class _Place:
    """Positions in an instruction's arguments, which start at `line`, `col` of the file: one index of
    the text's line starts, so a thousand words on a thousand continued lines cost no more than they are."""

    def __init__(self, line: int, col: int, text: str) -> None:
        self.line, self.col = line, col
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def position(self, offset: int) -> tuple[int, int]:
        n = bisect_right(self.starts, offset) - 1
        return (self.line, self.col + offset) if n == 0 else (self.line + n, offset - self.starts[n] + 1)

    def span(self, a: int, b: int) -> Span:
        return self.position(a) + self.position(b)


# A comment line inside a continued instruction (not its first line): Docker drops it.
_COMMENT_LINE = re.compile(r"(?<=\n)[ \t]*#[^\n]*")


def _assignments(tree: Tree, text: str, line: int, col: int, env: bool) -> dict[str, Any]:
    place = _Place(line, col, text)
    text = _COMMENT_LINE.sub(lambda m: " " * len(m.group(0)), text)  # blanked: every offset stays
    data: dict[str, Any] = {}
    spans: dict[str, tuple[Span, Span]] = {}
    words = [m for m in _WORD.finditer(text) if not m.group(0).startswith("#")]
    if env and words and "=" not in words[0].group(0):  # legacy `ENV NAME value with spaces`
        name = words[0]
        rest = text[name.end() :].strip()
        at = text.find(rest, name.end()) if rest else name.end()
        data[name.group(0)] = _unquote(rest)
        spans[name.group(0)] = (place.span(name.start(), name.end()), place.span(at, at + len(rest)))
    else:
        for m in words:
            word = re.sub(r"\\\n$", "", m.group(0))  # `A=1\` ending a continued line
            if not word.strip("\\ \t\n"):
                continue
            key, _, raw = word.partition("=")
            key_end = m.start() + len(key)
            data[key] = _unquote(raw) if "=" in word else None
            spans[key] = (place.span(m.start(), key_end), place.span(key_end + 1, m.start() + len(word)))
    tree.table[id(data)] = spans
    tree.keys.update(data)
    return data


def _unquote(raw: str) -> str:
    out: list[str] = []
    for m in re.finditer(r'"((?:[^"\\]|\\.)*)"|\'([^\']*)\'|\\(.)|([^"\'\\]+)', raw, re.S):
        if m.group(1) is not None:
            out.append(re.sub(r"\\(.)", r"\1", m.group(1)))
        else:
            out.append(next(g for g in m.groups()[1:] if g is not None))
    return "".join(out)


def _exec_form(tree: Tree, text: str, line: int, col: int) -> list[str] | None:
    try:
        items = json.loads(text)
    except ValueError:
        return None
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        return None
    place = _Place(line, col, text)
    spans: list[Span] = []
    at = 0
    for m in re.finditer(r'"(?:[^"\\]|\\.)*"', text):
        if len(spans) < len(items):
            spans.append(place.span(m.start(), m.end()))
        at = m.end()
    if len(spans) != len(items) or at == 0:
        return None
    tree.table[id(items)] = spans
    return items


def parse_env_file(text: str) -> Tree:
    """`NAME=value` lines (`export` allowed, quotes removed); comments and blank lines skipped."""
    lines = text.split("\n")
    data: dict[str, Any] = {}
    spans: dict[str, tuple[Span, Span]] = {}
    tree = Tree(roots=[data], root_spans=[(1, 1, len(lines), 1)])
    for n, raw in enumerate(lines, start=1):
        m = _ENV_LINE.match(raw.rstrip("\r"))
        if m is None:
            if raw.strip() and not raw.strip().startswith("#"):
                tree.warnings.append((n, "not a `NAME=value` line"))
            continue
        value = m.group("value").rstrip()
        quoted = re.match(r'"(?:[^"\\]|\\.)*"|\'[^\']*\'', value)
        value = quoted.group(0) if quoted else re.split(r"\s+#", value, maxsplit=1)[0].rstrip()
        name_col = len(m.group("lead")) + 1
        value_col = m.start("value") + 1
        data[m.group("name")] = _unquote(value)
        spans[m.group("name")] = (
            (n, name_col, n, name_col + len(m.group("name"))),
            (n, value_col, n, value_col + len(value)),
        )
    tree.table[id(data)] = spans
    tree.keys.update(data)
    if not data and tree.warnings:
        raise ParseError(f"not an env file: {tree.warnings[0][1]}", tree.warnings[0][0])
    return tree
