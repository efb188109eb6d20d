"""Transcribe one of GitLab's markdown pages into a `docs/record/*.yaml` data file.

`python -m scanner.report.transcribe removals|graphql PAGE.md OUT.yaml --commit SHA` parses the page
(headings and milestone lines, not prose) and rewrites OUT.yaml: an entry already in OUT.yaml keeps
its decision (`policies`, `todo`, `why`, `type`, `same_as`); a removal whose heading is also a
heading of the deprecations page gets `same_as` that entry (one change, counted once); any other new
entry is written with no decision, so `python -m scanner.report.record` refuses to load the file
until a person gives it one. Only releases from 15.0 on are kept (the record's range).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scanner.core.versions import Version
from scanner.report.record import DATA, DEPRECATIONS, slug

FIRST = Version(15, 0)
_H2_REMOVED = re.compile(r"^## Removed in (\d+\.\d+)\s*$")
_H2_GITLAB = re.compile(r"^## GitLab (\d+\.\d+)\s*$")
_H3 = re.compile(r"^### (.+?)\s*$")
_ANNOUNCED = re.compile(r"^Announced in (\d+\.\d+)\b")
_RELEASE = re.compile(r"\d+\.\d+")
PAGES = {
    "removals": ("doc/update/removals.md", "https://docs.gitlab.com/update/removals/"),
    # the data files the removals page is compiled from, where the page copy is older than they are
    "removals-data": ("data/removals/16_0", "https://docs.gitlab.com/update/removals/"),
    "graphql": ("doc/api/graphql/removed_items.md", "https://docs.gitlab.com/api/graphql/removed_items/"),
}
HEAD = """\
# {path} in gitlabhq/gitlabhq, entry by entry from 15.0 on, written by
# `python -m scanner.report.transcribe {kind} PAGE.md {out} --commit SHA` from the page's headings
# (docs/record/sources/ holds the extract it read); decisions are kept when it is run again.
# An entry that is the same change as an entry of another recorded page has `same_as` (that entry's
# URL): it takes its type and verdict from there and is counted once, there. Format of the others:
# docs/record/deprecations.yaml.
"""


@dataclass(frozen=True, slots=True)
class Parsed:
    title: str
    removal: str
    announced: str | None = None
    anchor: str | None = None  # None: derived from the title


def removals(markdown: str) -> list[Parsed]:
    """`## Removed in X.Y` sections and their `### title` entries (`####` are parts of an entry); an
    `Announced in X.Y` line under a title (an extract of GitLab's data files) is its announcement."""
    found: list[Parsed] = []
    release: str | None = None
    for line in markdown.splitlines():
        if m := _H2_REMOVED.match(line):
            release = m.group(1)
        elif line.startswith("## "):
            release = None
        elif (m := _H3.match(line)) and release and Version.parse(release) >= FIRST:
            found.append(Parsed(m.group(1), release))
        elif (m := _ANNOUNCED.match(line)) and found and release == found[-1].removal:
            found[-1] = Parsed(found[-1].title, release, m.group(1))
    return found


def _cells(line: str) -> list[str]:
    return [c.strip().strip("`") for c in line.strip().strip("|").split("|")]


def _item(header: list[str], row: list[str]) -> str:
    """One removed item of a table row, named as the GraphQL schema names it."""
    cols = dict(zip(header, row, strict=False))
    argument = cols.get("Argument name", "-")
    if "Mutation" in cols:
        name = f"`{cols['Mutation']}` mutation"
    elif "GraphQL type" in cols:
        return f"`{cols['GraphQL type']}.{cols['Field name']}`"
    else:
        name = f"`{cols['Field name']}` field"
    return name if argument in ("", "-") else f"`{argument}` argument of {name}"


def graphql_removed(markdown: str) -> list[Parsed]:
    """`## GitLab X.Y` sections and each row of their tables; the anchor is the section's."""
    found: list[Parsed] = []
    release: str | None = None
    header: list[str] = []
    for line in markdown.splitlines():
        if m := _H2_GITLAB.match(line):
            release, header = m.group(1), []
        elif not line.startswith("|") or release is None or Version.parse(release) < FIRST:
            header = [] if not line.startswith("|") else header
        elif not header:
            header = _cells(line)
        elif not set(line) <= set("|-: "):
            row = _cells(line)
            said = _RELEASE.search(dict(zip(header, row, strict=False)).get("Deprecated in", ""))
            found.append(Parsed(_item(header, row), release, said.group(0) if said else None,
                                f"gitlab-{release.replace('.', '')}"))
    return found


def _decided(old: dict[str, Any]) -> dict[str, Any]:
    return {k: old[k] for k in ("type", "same_as", "policies", "todo", "why") if k in old}


def entries(parsed: list[Parsed], old: list[dict[str, Any]], deprecations: dict[str, str]) -> list[dict[str, Any]]:
    """The data file's entries: the page's order, earlier decisions kept, duplicates linked."""
    before = {e["title"]: e for e in old}
    out: list[dict[str, Any]] = []
    for p in parsed:
        entry: dict[str, Any] = {"title": p.title}
        if p.anchor:
            entry["anchor"] = p.anchor
        if p.announced:
            entry["announced"] = p.announced
        entry["removal"] = p.removal
        if p.title in before:
            entry |= _decided(before[p.title])
        elif slug(p.title) in deprecations:
            entry["same_as"] = deprecations[slug(p.title)]
        out.append(entry)
    return out


def _deprecation_anchors(yaml: Any) -> dict[str, str]:
    """Anchor → URL of every recorded entry of the deprecations page (read raw: a data file with an
    undecided entry does not load through `record`)."""
    found: dict[str, str] = {}
    for path in sorted(DATA.glob("*.yaml")):
        data = yaml.load(path.read_text(encoding="utf-8"))
        if data.get("page") == DEPRECATIONS:
            for e in data["entries"]:
                anchor = str(e.get("anchor") or slug(e["title"]))
                found[anchor] = f"{DEPRECATIONS}#{anchor}"
    return found


def main(argv: list[str]) -> int:
    from ruamel.yaml import YAML

    if len(argv) != 5 or argv[0] not in PAGES or argv[3] != "--commit":
        kinds = "|".join(PAGES)
        sys.stderr.write(f"usage: python -m scanner.report.transcribe {kinds} PAGE.md OUT.yaml --commit SHA\n")
        return 2
    kind, page, out, commit = argv[0], Path(argv[1]), Path(argv[2]), argv[4]
    parsed = (graphql_removed if kind == "graphql" else removals)(page.read_text(encoding="utf-8"))
    yaml = YAML()
    old = yaml.load(out.read_text(encoding="utf-8"))["entries"] if out.exists() else []
    deprecations = _deprecation_anchors(yaml)
    path, url = PAGES[kind]
    rows = entries(parsed, old, deprecations)
    data = {"source": {"repo": "gitlabhq/gitlabhq", "path": path, "commit": commit}, "page": url, "entries": rows}
    yaml.width = 4096
    with out.open("w", encoding="utf-8") as f:
        f.write(HEAD.format(path=path, kind=kind, out=f"docs/record/{out.name}"))
        yaml.dump(data, f)
    undecided = [e["title"] for e in rows if not set(e) & {"same_as", "policies", "todo", "why"}]
    for title in undecided:
        sys.stderr.write(f"{out.name}: {title}: needs policies, todo or why\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
