"""Terraform with the GitLab provider: resources that stand for REST calls.

A `resource "gitlab_runner"` registers a runner with a registration token (`POST /runners`);
`gitlab_group` and `gitlab_application_settings` send their top-level attributes to the
groups and application settings APIs. Blocks are found with a small scanner that skips
comments and strings; attributes are the `name =` lines directly inside the resource block.
"""

from __future__ import annotations

import re

from scanner.readers.api.model import UNKNOWN, Param, RestCall, line_starts, offset_pos

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
