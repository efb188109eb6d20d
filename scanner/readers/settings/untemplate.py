"""Templated `config.toml` and `gitlab.rb`, the way fleets keep them (Ansible `.j2`, Chef `.erb`, Terraform
`.tpl`, Helm's `tpl`), read by the plain TOML and Ruby readers: template tags are neutralised line by line,
every position kept, and each value that held a tag gets its source text back afterwards.

The tags: Jinja and Go templates (`{{ … }}`, `{% … %}`, `{# … #}`), ERB (`<%= … %>`, `<% … %>`) and
Terraform (`${ … }`, `%{ if … }`, `%{ for … }`). On each line:

* a line of tags only (`{% if x %}`, `<% end %>`, `%{ endfor ~}`, `{{ extra | to_toml }}`) is blank: it
  controls or renders text no reader can know, and the lines inside an `if` or a `for` are read once;
* a statement or comment tag elsewhere (`{% if x %}key = 1{% endif %}`) becomes blanks;
* a tag inside a quoted string becomes private-use characters of its length (a tag may hold quotes);
* output tags outside strings (`limit = {{ n }}`, `url = ${url}/ci`) become one quoted string, from the
  first to the last of them on the line: `limit = "…"` reads, and so does `{{ name }} = 1` (a quoted key).

A template written to be pasted into a shell heredoc quotes its strings twice (`executor =
"\"docker+machine\""`, Terraform's `runner_config.tpl`): in a templated file, a string that is
wholly one more pair of double quotes is read without them.

A value or key that held a tag is the text written there (`{{ n }}`), never equal to a literal. Lines
holding a tag that still cannot be read are one notice for the file (`Tree.notices`), never one error per
line: template syntax is not the file's mistake (a broken line without a tag stays an input error).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from scanner.core.tree import Tagged, Tree

FILL = "\ue003"  # private-use: never in a settings file
# Jinja and ERB tags end at their closer; Terraform's at the first brace (its directives by their
# keywords: Ruby's `%{…}` is a string).
_CLOSERS = {"{{": "}}", "{%": "%}", "{#": "#}", "<%": "%>"}
_TERRAFORM = re.compile(r"\$\{[^{}\n]*\}|%\{~?[ \t]*(?:if|else|endif|for|endfor)\b[^{}\n]*\}")

_OUTPUT = ("{{", "<%=", "${")
_SPOT = re.compile(r" \((?:lines? \d|too many)[^()]*\)$")
_JINJA_ERB = ("{{", "{%", "{#", "<%")
_SHELL_QUOTED = re.compile(r'(?m)=[ \t]*"\\"')  # `key = "\"…`: a string quoted again for a shell
_ESCAPED = {'"': True, "'": False}  # which quote's strings take backslash escapes (TOML, Ruby)


def might_be_templated(text: str) -> bool:
    return any(m in text for m in ("{{", "{%", "{#", "<%", "${", "%{"))


def read(text: str, parse: Callable[[str], Tree], what: str) -> Tree:
    """`parse` over the neutralised text; values given back their source; one notice if templated."""
    neutral, templated = neutralize(text)
    tree = parse(neutral)
    if neutral != text:
        restore(tree, text)
        if _SHELL_QUOTED.search(text):
            _unquote(tree)
    if templated:
        one_notice(tree, what, text)
    return tree


def neutralize(text: str) -> tuple[str, bool]:
    """The text with its tags neutralised (same length, same lines), and whether it is templated: a tag
    outside a string, or any Jinja or ERB tag."""
    if not might_be_templated(text):
        return text, False
    templated = False
    out = []
    for line in text.split("\n"):
        new, outside, jinja = _line(line)
        templated = templated or outside or jinja
        out.append(new)
    return "\n".join(out), templated


def _line(line: str) -> tuple[str, bool, bool]:
    """One line neutralised; whether a tag stood outside a string; whether a Jinja or ERB tag is there."""
    tags, equals = _tags(line)
    if not tags:
        return line, False, False
    jinja = any(line.startswith(_JINJA_ERB, a) for a, _, _ in tags)
    gaps = zip([0] + [b for _, b, _ in tags], [a for a, _, _ in tags] + [len(line)], strict=True)
    if not any(line[a:b].strip() for a, b in gaps):  # nothing but tags
        return " " * len(line), True, jinja
    chars = list(line)
    bare = [(a, b) for a, b, inside in tags if not inside and line.startswith(_OUTPUT, a)]
    for a, b, inside in tags:
        fill = FILL if inside or line.startswith(_OUTPUT, a) else " "
        chars[a:b] = fill * (b - a)
    for side in ([t for t in bare if t[1] <= equals], [t for t in bare if t[0] > equals]):  # key, value
        if side:
            a, b = side[0][0], side[-1][1]
            chars[a:b] = '"' + FILL * (b - a - 2) + '"'
    return "".join(chars), any(not inside for _, _, inside in tags), jinja


def _tags(line: str) -> tuple[list[tuple[int, int, bool]], int]:
    """Each tag's start, end and whether it stands inside a quoted string (tags are skipped when quotes
    are counted: `"{{ x | default("a") }}"` is one string); and where the first `=` outside strings and
    tags is (the line's length if none): what is left of it is a key."""
    found: list[tuple[int, int, bool]] = []
    quote: str | None = None
    equals = -1
    i, n = 0, len(line)
    missing: set[str] = set()  # closers not on the rest of the line: looked for once (linear)
    while i < n:
        end = _tag_end(line, i, missing) if line[i] in "{<$%" else -1
        if end > i:
            found.append((i, end, quote is not None))
            i = end
            continue
        c = line[i]
        if quote is None and c == "#":
            break  # a comment, to the end of the line (TOML, Ruby)
        if quote is not None and c == "\\" and _ESCAPED[quote]:
            i += 2
            continue
        if c in _ESCAPED and (quote is None or quote == c):
            quote = None if quote == c else c
        elif c == "=" and quote is None and equals < 0:
            equals = i
        i += 1
    return found, (n if equals < 0 else equals)


def _tag_end(line: str, i: int, missing: set[str]) -> int:
    """Where the tag starting at `i` ends, or -1."""
    closer = _CLOSERS.get(line[i : i + 2])
    if closer is None:
        m = _TERRAFORM.match(line, i)
        return m.end() if m else -1
    if closer in missing:
        return -1
    end = line.find(closer, i + 2)
    if end < 0:
        missing.add(closer)
        return -1
    return end + len(closer)


def restore(tree: Tree, text: str) -> None:
    """Each value and key read from neutralised text gets the source written at its span back."""
    lines = text.split("\n")
    for node in _containers(tree):
        spans = tree.table.get(id(node))
        if spans is None:
            continue
        if isinstance(node, list):
            for i, value in enumerate(node):
                node[i] = _restored(value, spans[i], lines)
            continue
        if any(FILL in key for key in node):
            _rekey(tree, node, spans, lines)
        for key, value in node.items():
            node[key] = _restored(value, spans[key][1], lines)
    for i, root in enumerate(tree.roots):
        tree.roots[i] = _restored(root, tree.root_spans[i], lines)


def _unquote(tree: Tree) -> None:
    """Each string value wholly inside one more pair of double quotes loses them (`"\"x\""` reads `x`)."""
    for node in _containers(tree):
        for key in range(len(node)) if isinstance(node, list) else list(node):
            value = node[key]
            if isinstance(value, str) and len(value) >= 2 and value[0] == value[-1] == '"':
                node[key] = value[1:-1]


def _containers(tree: Tree) -> Iterator[dict[Any, Any] | list[Any]]:
    """Each mapping and list of the tree once (an alias is one node), a parent before its children;
    the children are taken after the caller has handled the parent, which may replace its scalars."""
    seen: set[int] = set()
    stack: list[Any] = list(tree.roots)
    while stack:
        node = stack.pop()
        if id(node) in seen or not isinstance(node, dict | list):
            continue
        seen.add(id(node))
        yield node
        stack.extend(node if isinstance(node, list) else node.values())


def _restored(value: Any, span: tuple[int, int, int, int], lines: list[str]) -> Any:
    if isinstance(value, Tagged) and isinstance(value.value, str) and FILL in value.value:
        return Tagged(value.tag, _source(value.value, span, lines))
    if isinstance(value, str) and FILL in value:
        return _source(value, span, lines)
    return value


def _source(value: str, span: tuple[int, int, int, int], lines: list[str]) -> str:
    """The text written at a one-line span, without the quotes around a string; a value over several
    lines keeps its placeholders."""
    line, col, end_line, end_col = span
    if line != end_line or not 0 < line <= len(lines):
        return value
    written = lines[line - 1][col - 1 : end_col - 1]
    if len(written) > 1 and written[0] == written[-1] and written[0] in "\"'":
        return written[1:-1]
    return written


def _rekey(tree: Tree, node: dict[str, Any], spans: dict[str, Any], lines: list[str]) -> None:
    items = [(k, v, spans[k]) for k, v in node.items()]
    node.clear()
    spans.clear()
    for key, value, key_spans in items:
        if FILL in key:
            key = _source(key, key_spans[0], lines)
            tree.keys.add(key)
        node[key] = value
        spans[key] = key_spans


def one_notice(tree: Tree, what: str, text: str) -> None:
    """A templated file's problems on lines that hold a tag become one notice for the file (template
    syntax is not the file's mistake); a problem on a line without one stays an error."""
    lines = text.split("\n")
    tagged = [(n, m) for n, m in tree.warnings if n is not None and 0 < n <= len(lines) and _tags(lines[n - 1])[0]]
    if not tagged:
        return
    tree.warnings[:] = [w for w in tree.warnings if w not in tagged]
    line, message = tagged[0]
    message = _SPOT.sub("", message)  # the YAML reader's "(lines 3–5 not read)": the notice says it
    more = f" and {len(tagged) - 1} more" if len(tagged) > 1 else ""
    tree.notices.append((line, f"templated {what}: line {line}{more} not read ({message}); the rest was checked"))
