"""Terraform `helm_release` resources of GitLab's charts (`gitlab-runner`, `gitlab`): the values the Helm
provider sends, read as a Helm values document with positions in the `.tf` file, so the Helm policies
find `runnerRegistrationToken` set from Terraform as they find it in a `values.yaml`.

The chart is its name written there or a local value of the file that holds it (`chart =
local.chart_name` with `locals { chart_name = "gitlab-runner" }`).

Values come from, in the provider's order (a later one wins): each item of `values = [...]` — a heredoc
of YAML (`<<-EOT … EOT`; Terraform's `${…}` and `%{ if }` read as `untemplate` reads them) or
`yamlencode({...})` of an HCL object — then each `set { name = "a.b" value = … }` block (also
`set_sensitive`, and the provider's newer `set = [{ name = …, value = … }]`). `file(...)` and other
calls are left alone (a values file in the tree is read as one). A value that is an expression
(`var.token`, `"${var.tag}"`) is the text written there: present, never equal to a literal (`hcl`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from scanner.core.tree import ParseError, Span, Tree
from scanner.readers.settings.hcl import Block, Call, HclError, Heredoc, Reader

_RELEASE = re.compile(r'(?m)^[ \t]*resource[ \t]+"helm_release"[ \t]+"[^"\n]*"[ \t]*\{')
_CHART = re.compile(r"(?:^|/)gitlab(?:-runner)?$")
_LOCALS = re.compile(r"(?m)^[ \t]*locals[ \t]*\{")
_LOCAL_REF = re.compile(r"local\.([A-Za-z_][\w-]*)")
_SET_BLOCKS = ("set", "set_sensitive")


def releases(text: str) -> tuple[list[Tree], list[tuple[int | None, str]]]:
    """The values of each `helm_release` of a GitLab chart, as Helm values documents; and the problems
    met reading them (`(line, message)`: that release is not read, the rest of the file is)."""
    found: list[Tree] = []
    problems: list[tuple[int | None, str]] = []
    reader = Reader(text)
    names: dict[str, Any] | None = None  # the file's `locals`, read when a chart names one
    for block in _blocks(reader, _RELEASE, "helm_release", problems):
        chart = block.attrs.get("chart", (None,))[0]
        if isinstance(chart, str) and (ref := _LOCAL_REF.fullmatch(chart)):
            if names is None:
                names = _locals(text, problems)
            chart = names.get(ref.group(1), chart)
        if isinstance(chart, str) and _CHART.search(chart):
            tree = _values(reader, block, problems)
            if tree.roots[0]:
                found.append(tree)
    return found, problems


def _blocks(reader: Reader, start: re.Pattern[str], what: str,
            problems: list[tuple[int | None, str]]) -> Iterator[Block]:
    """Each block whose header `start` matches (up to its `{`), read with `reader`; one that cannot be
    read is a problem on its line, and the next is read."""
    for m in start.finditer(reader.text):
        if m.start() < reader.i:
            continue  # inside the block read before
        reader.i = m.end()
        try:
            block = reader.body(m.end() - 1)
        except HclError as exc:
            problems.append((reader.pos(exc.at)[0], f"{what} not read: {exc}"))
            continue
        yield block


def _locals(text: str, problems: list[tuple[int | None, str]]) -> dict[str, Any]:
    """The values of the file's `locals { … }` blocks (`chart = local.chart_name`)."""
    found: dict[str, Any] = {}
    for block in _blocks(Reader(text), _LOCALS, "locals", problems):
        found.update((name, value) for name, (value, _, _) in block.attrs.items())
    return found


def _values(reader: Reader, block: Block, problems: list[tuple[int | None, str]]) -> Tree:
    root: dict[str, Any] = {}
    tree = Tree(roots=[root], root_spans=[block.span], table=dict(reader.table))
    tree.table[id(root)] = {}
    listed = block.attrs.get("values", (None,))[0]
    for item, _ in _with_spans(reader, listed):
        doc = _document(reader, item, problems)
        if doc is not None:
            tree.table.update(doc.table)
            _merge(tree, root, doc.roots[0], doc.table)
    sets = [b.attrs for b in block.blocks if b.type in _SET_BLOCKS]
    for kind in _SET_BLOCKS:  # the provider's newer form: `set = [{ name = …, value = … }]`
        for item, _ in _with_spans(reader, block.attrs.get(kind, (None,))[0]):
            if isinstance(item, dict) and "name" in item:
                spans = reader.table[id(item)]
                sets.append({k: (v, spans[k][0], spans[k][1]) for k, v in item.items()})
    for attrs in sets:
        name, value = attrs.get("name"), attrs.get("value")
        if name is not None and isinstance(name[0], str) and value is not None:
            _set(tree, root, name[0], name[2], value[0], value[2])
    return tree


def _with_spans(reader: Reader, value: Any) -> list[tuple[Any, Span]]:
    if not isinstance(value, list):
        return []
    return list(zip(value, reader.table.get(id(value), []), strict=False))


def _document(reader: Reader, item: Any, problems: list[tuple[int | None, str]]) -> Tree | None:
    """A values item as a document: a heredoc of YAML, or `yamlencode({...})`."""
    if isinstance(item, Call) and item.name == "yamlencode" and item.args and isinstance(item.args[0][0], dict):
        obj = item.args[0][0]
        return Tree(roots=[obj], root_spans=[item.args[0][1]], table=reader.table)
    if not isinstance(item, Heredoc):
        return None
    from scanner.readers.settings import untemplate
    from scanner.readers.yamlrepair import read_yaml

    text = reader.text
    masked = "".join(c if c == "\n" else " " for c in text[: item.start]) + text[item.start : item.end]
    try:
        doc = untemplate.read(masked, read_yaml, "Helm values")
    except ParseError as exc:
        problems.append((exc.line, f"helm_release values: {exc.message}"))
        return None
    problems.extend((line, f"helm_release values: {message}") for line, message in doc.warnings + doc.notices)
    return doc if doc.roots and isinstance(doc.roots[0], dict) else None


def _merge(tree: Tree, into: dict[str, Any], new: dict[str, Any], table: dict[int, Any]) -> None:
    """Helm's merge of one values document into those before it: mappings merge, the rest is replaced."""
    spans = table.get(id(new), {})
    for key, value in new.items():
        old = into.get(key)
        if isinstance(old, dict) and isinstance(value, dict):
            _merge(tree, old, value, table)
            continue
        into[key] = value
        tree.table[id(into)][key] = spans[key]
        tree.keys.add(key)


def _set(tree: Tree, root: dict[str, Any], name: str, name_span: Span, value: Any, value_span: Span) -> None:
    """`set { name = "a.b" }`: the value at that path (`\\.` is a dot inside a key, as Helm's `--set`)."""
    steps = [s.replace("\0", ".") for s in name.replace("\\.", "\0").split(".")]
    node = root
    for step in steps[:-1]:
        child = node.get(step)
        if not isinstance(child, dict):
            child = {}
            tree.table[id(child)] = {}
            node[step] = child
            tree.table[id(node)][step] = (name_span, value_span)
            tree.keys.add(step)
        node = child
    node[steps[-1]] = value
    tree.table[id(node)][steps[-1]] = (name_span, value_span)
    tree.keys.add(steps[-1])
