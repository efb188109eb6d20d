"""Terraform: resources of the GitLab provider that stand for REST calls, and the shell scripts a
Terraform file holds.

A `resource "gitlab_runner"` registers a runner with a registration token (`POST /runners`);
`gitlab_group` and `gitlab_application_settings` send their top-level attributes to the
groups and application settings APIs. Blocks are found with a small scanner that skips
comments and strings; attributes are the `name =` lines directly inside the resource block.

Scripts (`scripts`, the `scripts` facet): the heredocs and quoted strings of the attributes that hold
a script or a command line — a VM's start-up script (`metadata_startup_script`, `user_data`,
`custom_data`, GCE's `startup-script` key), a provisioner's `inline`, `local-exec`'s `command`, a
`script` — and any heredoc whose body starts with a shebang, read by the shell reader as the machine
runs them: `<<-` indentation removed, string escapes decoded, Terraform's `${var.x}` made a shell
parameter of the same length (`${var_x}`), `%{ if … }` directives blanked, `$${` read as `${`. Each
character keeps its place in the `.tf` file, so a finding is at its exact line and column.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from scanner.core.document import Document
from scanner.core.lines import LineIndex
from scanner.readers import ci
from scanner.readers.api.model import UNKNOWN, Param, RestCall, line_starts, offset_pos
from scanner.readers.shell import ScriptText

Items = list[tuple[ci.ScriptItem, ScriptText]]

PREFILTER = re.compile(r'resource\s+"gitlab_')
_RESOURCE = re.compile(r'resource\s+"(gitlab_[a-z_]+)"\s+"[^"]*"\s*\{')
_ATTRIBUTE = re.compile(r"^[ \t]*([A-Za-z_][A-Za-z0-9_]*)[ \t]*=(?!=)[ \t]*(\S[^\n]*)?$", re.M)
# resource type → the REST call it makes (the provider's create/update)
RESOURCES: dict[str, tuple[str, str]] = {
    "gitlab_runner": ("POST", "/runners"),
    "gitlab_group": ("PUT", "/groups/:id"),
    "gitlab_application_settings": ("PUT", "/application/settings"),
}


def _block_end(text: str, start: int, limit: int) -> int:
    """Offset of the `}` closing the block whose `{` is at `start - 1` (`limit` when it is not
    closed before: where the next resource begins, since resources do not nest)."""
    depth, i = 1, start
    while i < limit and depth:
        c = text[i]
        if c == '"':
            i += 1
            while i < limit and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif c == "#" or text.startswith("//", i):
            nl = text.find("\n", i, limit)
            i = limit if nl < 0 else nl
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2, limit)
            i = limit if end < 0 else end + 1
        elif c in "{}":
            depth += 1 if c == "{" else -1
        i += 1
    return min(i, limit) - 1 if depth == 0 else limit


def _value(raw: str | None) -> object:
    raw = (raw or "").strip()
    literals: dict[str, object] = {"true": True, "false": False, "null": None}
    if raw in literals:
        return literals[raw]
    if raw.isdigit():
        return int(raw)
    return raw[1:-1] if len(raw) > 1 and raw[0] == raw[-1] == '"' else UNKNOWN


def _top_level(body: str) -> list[tuple[str, int, object]]:
    """Attributes directly inside a block body: (name, offset in body, literal value)."""
    out: list[tuple[str, int, object]] = []
    depth = 0
    pos = 0
    for m in _ATTRIBUTE.finditer(body):
        depth += body.count("{", pos, m.start()) - body.count("}", pos, m.start())
        pos = m.start()
        if depth == 0:
            out.append((m.group(1), m.start(1), _value(m.group(2))))
    return out


def extract(text: str) -> list[RestCall]:
    if not PREFILTER.search(text):
        return []
    starts = line_starts(text)
    calls: list[RestCall] = []
    found = list(_RESOURCE.finditer(text))
    hashes: dict[int, int] = {}  # line → offset of its first `#` (-1: none)
    for k, m in enumerate(found):
        line, col = offset_pos(starts, m.start(1))
        if line not in hashes:
            hashes[line] = text.find("#", starts[line - 1], starts[line] if line < len(starts) else len(text))
        if 0 <= hashes[line] < m.start():
            continue  # commented out
        target = RESOURCES.get(m.group(1))
        if target is None:
            continue
        call = RestCall(target[0], target[1], (line, col, line, col + len(m.group(1))))
        body_start = m.end()
        limit = found[k + 1].start() if k + 1 < len(found) else len(text)
        body = text[body_start : _block_end(text, body_start, limit)]
        for name, at, value in _top_level(body):
            pl, pc = offset_pos(starts, body_start + at)
            call.params.append(Param(name, (pl, pc, pl, pc + len(name)), value))
        calls.append(call)
    return calls


# Shell scripts written in a Terraform file ------------------------------------------------------

# Attributes (and object keys) whose string holds a shell script or command line: a VM's start-up
# script (`metadata_startup_script`, GCE's `metadata = { startup-script = … }`, `user_data`, Azure's
# `custom_data`), a provisioner's `inline` commands, `local-exec`'s `command`, a `script`.
SCRIPT_ATTRIBUTES = frozenset({"metadata_startup_script", "startup_script", "startup-script", "user_data",
                               "user-data", "custom_data", "inline", "command", "script"})
_OPENER = re.compile(r"<<(-?)([A-Za-z_][\w-]*)[ \t]*(?:\r\n|\r|\n)")
_ATTRIBUTE_START = re.compile(r'[ \t]*(?:([A-Za-z_][\w-]*)|"([^"\n\\]*)")[ \t]*=(?![=>])')
_BLOCK_START = re.compile(r'[ \t]*[A-Za-z_][\w-]*(?:[ \t]+(?:"[^"\n]*"|[A-Za-z_][\w-]*))*[ \t]*\{')
_LINE_END = re.compile(r"[\r\n]")
# `${join("\n", formatlist("--volume %s \\", var.volumes))}` at a line's end: lines that each end with a
# backslash, so the command around it goes on to the next line.
_CONTINUES = re.compile(r'\\\\"')
_LINE_REST = re.compile(r"[ \t]*(?:\n|$)")
_STRING_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}


@dataclass(frozen=True, slots=True)
class ScriptString:
    """A string of a Terraform file read as a shell script: the attribute holding it, its value as the
    machine runs it (template placeholders neutralised) and the offset in the file of each character."""

    attribute: str
    value: str
    offsets: tuple[int, ...]


def script_strings(text: str) -> list[ScriptString]:
    """The heredocs and quoted strings of the attributes that hold scripts (`SCRIPT_ATTRIBUTES`), and
    every heredoc whose body starts with a shebang, in the order they are written. Never fails: text
    it cannot read (an unclosed heredoc or string) holds no script."""
    found: list[ScriptString] = []
    for attribute, start, end, form in _strings(text):
        if form == '"' and attribute not in SCRIPT_ATTRIBUTES:
            continue
        value, offsets = _quoted(text, start, end) if form == '"' else _heredoc(text, start, end, form == "<<-")
        if value.strip() and (attribute in SCRIPT_ATTRIBUTES or value.lstrip().startswith("#!")):
            found.append(ScriptString(attribute, value, tuple(offsets)))
    return found


def _strings(text: str) -> Iterator[tuple[str, int, int, str]]:
    """Each heredoc body and quoted string outside comments: (the attribute it is the value of, or "";
    [start, end) of its content; `<<`, `<<-` or `"`). One pass, linear in the text."""
    attribute = ""
    i, n = 0, len(text)
    line_start = True
    while i < n:
        if line_start:
            line_start = False
            m = _ATTRIBUTE_START.match(text, i)
            if m:
                attribute = m.group(1) or m.group(2) or ""
                i = m.end()
                continue
            if _BLOCK_START.match(text, i):
                attribute = ""
        c = text[i]
        if c in "\r\n":
            i += 1
            line_start = True
        elif c == "#" or text.startswith("//", i):
            i = _line_end(text, i)
        elif text.startswith("/*", i):
            close = text.find("*/", i + 2)
            i = n if close < 0 else close + 2
        elif c == '"':
            end = _string_end(text, i + 1)
            if end is not None:
                yield attribute, i + 1, end, '"'
            i = _line_end(text, i) if end is None else end + 1
        elif c == "<" and (m := _OPENER.match(text, i)):
            closer = re.compile(rf"(?m)^[ \t]*{re.escape(m.group(2))}[ \t]*\r?$")
            found = closer.search(text, m.end())
            if found is None:
                return  # never closed: the rest of the file is its body, not a script
            yield attribute, m.end(), found.start(), "<<" + m.group(1)
            i = found.end()
        else:
            i += 1


def _line_end(text: str, i: int) -> int:
    m = _LINE_END.search(text, i)
    return len(text) if m is None else m.start()


def _string_end(text: str, i: int) -> int | None:
    """The offset of the quote closing a string whose content starts at `i` (template sequences
    `${…}`, `%{…}` and the strings inside them skipped), or None when the line ends first."""
    stack: list[int | None] = [None]  # innermost last: None a string, a number the braces open in a sequence
    n = len(text)
    while i < n:
        c = text[i]
        if c in "\r\n":
            return None
        top = stack[-1]
        if top is None:
            if c == "\\":
                i += 2
                continue
            if c == '"':
                stack.pop()
                if not stack:
                    return i
            elif text.startswith(("$${", "%%{"), i):
                i += 3
                continue
            elif text.startswith(("${", "%{"), i):
                stack.append(0)
                i += 2
                continue
        elif c == '"':
            stack.append(None)
        elif c == "{":
            stack[-1] = top + 1
        elif c == "}":
            if top == 0:
                stack.pop()
            else:
                stack[-1] = top - 1
        i += 1
    return None


def _heredoc(text: str, start: int, end: int, indented: bool) -> tuple[str, list[int]]:
    """A heredoc body as Terraform renders it: `<<-` takes the indentation common to its lines away."""
    lines = [m for m in re.finditer(r"[^\r\n]*(?:\r\n|\r|\n)?", text[start:end]) if m.group()]
    cut = 0
    if indented:
        indents = [len(m.group()) - len(m.group().lstrip(" \t")) for m in lines if m.group().strip()]
        cut = min(indents, default=0)
    chars: list[str] = []
    offsets: list[int] = []
    for m in lines:
        body = m.group()
        skip = min(cut, len(body) - len(body.lstrip(" \t")))
        for k in range(skip, len(body)):
            if body[k] == "\n" and body[k - 1 : k] == "\r":
                continue  # CRLF: one newline, at the CR
            chars.append("\n" if body[k] == "\r" else body[k])
            offsets.append(start + m.start() + k)
    return _template("".join(chars), offsets)


def _quoted(text: str, start: int, end: int) -> tuple[str, list[int]]:
    """A quoted string's value: its escapes (`\\"`, `\\n`, `\\u00e9`…) decoded, each at its backslash."""
    chars: list[str] = []
    offsets: list[int] = []
    i = start
    while i < end:
        c = text[i]
        if c == "\\" and i + 1 < end:
            e = text[i + 1]
            width = {"u": 4, "U": 8}.get(e, 0)
            digits = text[i + 2 : i + 2 + width]
            if width and len(digits) == width and all(d in "0123456789abcdefABCDEF" for d in digits) and \
                    int(digits, 16) < 0x110000:
                chars.append(chr(int(digits, 16)))
                i += 2 + width
            else:
                chars.append(_STRING_ESCAPES.get(e, "\\" + e))
                i += 2
            offsets.extend([i - 2 - width] * len(chars[-1]))
            continue
        chars.append(c)
        offsets.append(i)
        i += 1
    return _template("".join(chars), offsets)


def _template(value: str, offsets: list[int]) -> tuple[str, list[int]]:
    """Terraform's template sequences made neutral for the shell, one character for one: `${expr}`
    becomes a shell parameter `${expr_as_name}` of the same length (ending in `\\` when the lines it
    makes end with one, `_CONTINUES`), a directive `%{ if … }` blanks; `$${` and `%%{` are the literal
    `${` and `%{` they stand for."""
    if "{" not in value:
        return value, offsets
    out: list[str] = []
    kept: list[int] = []
    i, n = 0, len(value)
    while i < n:
        c = value[i]
        if c in "$%" and value.startswith(c + "{", i + 1):  # `$${`: a literal `${`
            out += [c, "{"]
            kept += [offsets[i + 1], offsets[i + 2]]
            i += 3
            continue
        if c in "$%" and value.startswith("{", i + 1):
            close = _sequence_end(value, i + 2)
            if close is None:
                out.append(c)
                kept.append(offsets[i])
                i += 1
                continue
            if c == "$":
                inner = value[i + 2 : close]
                name = "".join(ch if ch.isascii() and (ch.isalnum() or ch == "_") else "_" for ch in inner)
                name = "_" + name[1:] if name[:1].isdigit() else name
                if len(name) > 1 and _CONTINUES.search(inner) and _LINE_REST.match(value, close + 1):
                    out += ["$", "{", *name[:-1], "}", "\\"]  # its lines end with `\`: the command goes on
                else:
                    out += ["$", "{", *name, "}"]
            else:
                out += [" " if ch != "\n" else "\n" for ch in value[i : close + 1]]
            kept += offsets[i : close + 1]
            i = close + 1
            continue
        out.append(c)
        kept.append(offsets[i])
        i += 1
    return "".join(out), kept


def _sequence_end(value: str, i: int) -> int | None:
    """The index of the `}` closing a template sequence whose content starts at `i`."""
    depth = 0
    quote = False
    while i < len(value):
        c = value[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == '"':
                quote = False
        elif c == '"':
            quote = True
        elif c == "{":
            depth += 1
        elif c == "}":
            if depth == 0:
                return i
            depth -= 1
        i += 1
    return None


def scripts(doc: Document, prefilter: re.Pattern[str]) -> Items:
    """The scripts of a Terraform file (`script_strings`) holding a word some script policy looks for,
    each a job of its own (a machine runs its start-up script alone), its characters at their place."""
    if "<<" not in doc.text and not any(name in doc.text for name in SCRIPT_ATTRIBUTES):
        return []
    lines = LineIndex(doc.text)
    items: Items = []
    for n, found in enumerate(script_strings(doc.text)):
        if prefilter.search(found.value):
            positions = tuple(lines.position(o) for o in found.offsets)
            items.append((ci.ScriptItem(found.value, (0,), (0, n)), ScriptText(found.value, (), chars=positions)))
    return items
