"""One file's fixes: keep those whose edits do not overlap, verify them, write atomically or diff.

Overlapping changes are not merged: the first (by position) is applied and the others are
reported; the next `sunset fix` run sees the new text and fixes what is still reported. All
changes of a file are verified together first; when that fails, each is added and verified in
turn, so one bad fix is refused without holding back the others.
"""

from __future__ import annotations

import codecs
import contextlib
import difflib
import os
import re
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from scanner.core.document import Document
from scanner.core.results import Route, route_text
from scanner.fix.plan import Change, Edit
from scanner.fix.sites import Site
from scanner.fix.source import value_at
from scanner.fix.verify import Unverified, verify

Status = Literal["fixed", "unsafe", "skipped", "overlap", "refused", "unwritten"]


@dataclass(frozen=True, slots=True)
class Outcome:
    site: Site
    status: Status
    detail: str


class ChangedOnDisk(Exception):
    """The file is not the text that was scanned (edited meanwhile, or not UTF-8 any more)."""


def apply_edits(text: str, edits: list[Edit]) -> str:
    parts, last = [], 0
    for edit in sorted(edits, key=lambda e: (e.start, e.end)):
        parts += [text[last : edit.start], edit.text]
        last = edit.end
    parts.append(text[last:])
    return "".join(parts)


def _overlaps(a: Edit, b: Edit) -> bool:
    return (a.start < b.end and b.start < a.end) or a.start == b.start


def fix_text(doc: Document, changes: list[Change]) -> tuple[str, list[Outcome]]:
    """The document's new text, and what became of each change."""
    outcomes: list[Outcome] = []
    chosen: list[Change] = []
    left: dict[Route, int] = {}  # entries each mapping keeps after this file's deletions
    for change in sorted(changes, key=lambda c: (min(e.start for e in c.edits), c.site.finding.rule_id)):
        if any(_overlaps(e, f) for c in chosen for f in c.edits for e in change.edits):
            outcomes.append(
                Outcome(change.site, "overlap", "overlaps another fix in this file; run `sunset fix` again")
            )
        elif (emptied := _empties(doc, change, left)) is not None:
            outcomes.append(Outcome(change.site, "skipped", emptied))
        else:
            chosen.append(change)
    accepted = _verified(doc, chosen, outcomes)
    outcomes += [Outcome(c.site, "fixed", c.summary) for c in accepted]
    return apply_edits(doc.text, [e for c in accepted for e in c.edits]), outcomes


def _empties(doc: Document, change: Change, left: dict[Route, int]) -> str | None:
    """Why deleting this entry is held back: with the deletions before it, its mapping would be empty."""
    route = change.site.hit.route
    if change.spec.kind != "delete" or doc.kind == "omnibus-config":  # gitlab.rb: whole statements go
        return None
    parent = value_at(doc.data.roots, route[:-1])
    count = left.get(route[:-1], len(parent) if isinstance(parent, dict) else 0)
    if count <= 1:
        return f"the other fixes already empty `{route_text(route[:-1])}`; delete what is left by hand"
    left[route[:-1]] = count - 1
    return None


def _attempt(doc: Document, changes: list[Change]) -> None:
    text = apply_edits(doc.text, [e for c in changes for e in c.edits])
    verify(doc, text, [x for c in changes for x in c.expects])


def _verified(doc: Document, chosen: list[Change], outcomes: list[Outcome]) -> list[Change]:
    if not chosen:
        return []
    with contextlib.suppress(Unverified):
        _attempt(doc, chosen)
        return chosen
    accepted: list[Change] = []
    for change in chosen:
        try:
            _attempt(doc, accepted + [change])
        except Unverified as exc:
            outcomes.append(Outcome(change.site, "refused", str(exc)))
        else:
            accepted.append(change)
    return accepted


def write_atomic(path: Path, scanned: str, new: str) -> None:
    """Replace the file's text with `new` if it still holds `scanned`: a temporary file in the same
    folder with the same mode (and owner, where allowed), then `os.replace`. A BOM is kept."""
    real = path.resolve()  # a symlink keeps pointing at the fixed file
    raw = real.read_bytes()
    try:
        current = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        current = None
    if current != scanned:
        raise ChangedOnDisk("the file changed since it was scanned; run `sunset fix` again")
    data = (codecs.BOM_UTF8 if raw.startswith(codecs.BOM_UTF8) else b"") + new.encode("utf-8")
    info = real.stat()
    fd, tmp = tempfile.mkstemp(dir=real.parent, prefix=f".{real.name}.", suffix=".sunset-fix")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, stat.S_IMODE(info.st_mode))
        with contextlib.suppress(PermissionError, AttributeError):
            if (info.st_uid, info.st_gid) != (os.stat(tmp).st_uid, os.stat(tmp).st_gid):
                os.chown(tmp, info.st_uid, info.st_gid)
        os.replace(tmp, real)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _lines(text: str) -> list[str]:
    return re.findall(r"[^\n]*\n|[^\n]+", text)


def unified_diff(path: str, old: str, new: str) -> str:
    """A unified diff (`a/` and `b/` prefixes, as `git apply` and `patch -p1` read them)."""
    out = []
    for line in difflib.unified_diff(_lines(old), _lines(new), f"a/{path}", f"b/{path}"):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)
