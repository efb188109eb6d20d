"""Transcribe one of GitLab's markdown pages into a `docs/record/*.yaml` data file, and say what changed.

`python -m scanner.report.transcribe deprecations|removals|removals-data|graphql PAGE.md OUT.yaml --commit SHA`
parses the page (headings and milestone lines, not prose) and rewrites OUT.yaml: an entry already in
OUT.yaml keeps its decision (`policies`, `todo`, `why`, `type`, `same_as`), matched by its title (or the
same title in other letter case: GitLab re-cases headings); a removal whose heading is also a heading of
the deprecations page gets `same_as` that entry (one change, counted once); any other new entry is
written with no decision, so `python -m scanner.report.record` refuses to load the file until a person
gives it one. An entry of OUT.yaml the page no longer lists is kept with `vanished:` (the commit of the
last copy that listed it) and is said to have vanished; it needs a `verdict` (what GitLab did with it:
removed, moved, pending, canceled or withdrawn, and the source that says so), and the report lists
every such entry with its verdict at each run. Only releases from 15.0 on are kept.

Each run writes `docs/record/changes-<OUT stem>.md`: what the page changed since the copy OUT.yaml was
read from (new entries, moves, new statuses, vanished entries), and prints it.

The deprecations page lists scheduled changes under `## GitLab X.Y`, then `## Pending changes` (taken
out of their milestone, being reassessed) and `## Canceled changes`. A change GitLab keeps at its
milestone but says it will no longer make (an old name kept working) is `withdrawn`: the extract
carries GitLab's sentence as a `- Not removed: …` line under the heading.
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
_H2_STATUS = {"## Pending changes": "pending", "## Canceled changes": "canceled"}
_H3 = re.compile(r"^### (.+?)\s*$")
_ANNOUNCED = re.compile(r"^Announced in (\d+\.\d+)\b")
_BULLET_ANNOUNCED = re.compile(r"^- Announced in GitLab (\d+\.\d+)\b")
_BULLET_REMOVAL = re.compile(r"^- Removal in GitLab (\d+\.\d+)\b")
_NOT_REMOVED = re.compile(r"^- Not removed: ")
_RELEASE = re.compile(r"\d+\.\d+")
PAGES = {
    "deprecations": ("doc/update/deprecations.md", DEPRECATIONS),
    "removals": ("doc/update/removals.md", "https://docs.gitlab.com/update/removals/"),
    # the data files the removals page is compiled from, where the page copy is older than they are
    "removals-data": ("data/removals/16_0", "https://docs.gitlab.com/update/removals/"),
    "graphql": ("doc/api/graphql/removed_items.md", "https://docs.gitlab.com/api/graphql/removed_items/"),
}
HEAD = """\
# {path} of GitLab (read in the mirror `source.repo` names), entry by entry from 15.0 on, written by
# `python -m scanner.report.transcribe {kind} PAGE.md {out} --commit SHA` from the page's headings
# (docs/record/sources/ holds the extract it read); decisions are kept when it is run again.
# An entry that is the same change as an entry of another recorded page has `same_as` (that entry's
# URL): it takes its type and verdict from there and is counted once, there. `status` is GitLab's
# when it is not a scheduled removal (pending, canceled, withdrawn); `vanished` names the last copy of
# the page that listed an entry this copy no longer lists, and its `verdict` what GitLab did with it
# (status, release, the source read). Format: scanner/report/record.py.
"""
_DECIDED = ("breaks", "type", "same_as", "policies", "todo", "why")


@dataclass(frozen=True, slots=True)
class Parsed:
    title: str
    removal: str | None
    announced: str | None = None
    anchor: str | None = None  # None: derived from the title
    status: str = ""  # "" scheduled; pending, canceled, withdrawn


def deprecations(markdown: str) -> list[Parsed]:
    """`## GitLab X.Y`, `## Pending changes` and `## Canceled changes` sections and their `### title`
    entries with their `- Announced in GitLab X.Y` / `- Removal in GitLab X.Y` lines; a title used twice
    gets GitLab's anchor for the second (`-1`)."""
    found: list[Parsed] = []
    release: str | None = None
    status = ""
    taken = False  # the current `###` entry is kept (15.0 and later)
    for line in markdown.splitlines():
        if m := _H2_GITLAB.match(line):
            release, status = m.group(1), ""
        elif line.strip() in _H2_STATUS:
            release, status = None, _H2_STATUS[line.strip()]
        elif line.startswith("## "):
            release, status = None, "skip"
        elif m := _H3.match(line):
            taken = status != "skip" and (release is None or Version.parse(release) >= FIRST)
            if taken:
                found.append(Parsed(m.group(1), release, None, None, status))
        elif not taken:
            continue
        elif found and (m := _BULLET_ANNOUNCED.match(line)):
            found[-1] = _with(found[-1], announced=m.group(1))
        elif found and (m := _BULLET_REMOVAL.match(line)) and found[-1].removal != m.group(1):
            raise ValueError(f"{found[-1].title}: removal {m.group(1)} under the section of {found[-1].removal}")
        elif found and _NOT_REMOVED.match(line):
            found[-1] = _with(found[-1], status="withdrawn")
    return _numbered(found)


def _with(p: Parsed, **changes: Any) -> Parsed:
    values = {"title": p.title, "removal": p.removal, "announced": p.announced, "anchor": p.anchor, "status": p.status}
    return Parsed(**(values | changes))


def _numbered(found: list[Parsed]) -> list[Parsed]:
    seen: dict[str, int] = {}
    out = []
    for p in found:
        anchor = slug(p.title)
        n = seen.get(anchor, 0)
        seen[anchor] = n + 1
        out.append(_with(p, anchor=f"{anchor}-{n}") if n else p)
    return out


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
            found[-1] = _with(found[-1], announced=m.group(1))
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


PARSERS = {"deprecations": deprecations, "removals": removals, "removals-data": removals, "graphql": graphql_removed}


def entries(parsed: list[Parsed], old: list[dict[str, Any]], deprecations: dict[str, str],
            old_commit: str = "") -> list[dict[str, Any]]:
    """The data file's entries: the page's order with earlier decisions kept and duplicates linked,
    then the old entries the page no longer lists, marked `vanished`."""
    by_anchor = {str(e.get("anchor") or slug(e["title"])): e for e in old}
    before = {e["title"]: e for e in old}
    folded = {e["title"].casefold(): e for e in old}
    out: list[dict[str, Any]] = []
    used: set[int] = set()
    for p in parsed:
        entry: dict[str, Any] = {"title": p.title}
        if p.anchor:
            entry["anchor"] = p.anchor
        if p.announced:
            entry["announced"] = p.announced
        if p.removal:
            entry["removal"] = p.removal
        if p.status:
            entry["status"] = p.status
        mine = by_anchor.get(p.anchor or slug(p.title))
        earlier = mine if mine is not None and mine["title"] == p.title else (
            before.get(p.title) or folded.get(p.title.casefold()))
        if earlier is not None and id(earlier) not in used:
            used.add(id(earlier))
            entry |= {k: earlier[k] for k in _DECIDED if k in earlier}
        elif slug(p.title) in deprecations:
            entry["same_as"] = deprecations[slug(p.title)]
        out.append(entry)
    for e in old:
        if id(e) not in used:
            gone = dict(e) | {"vanished": str(e.get("vanished") or old_commit)}
            if isinstance(e.get("verdict"), dict):  # a plain mapping is written in block style, URLs and all
                gone["verdict"] = dict(e["verdict"])
            out.append(gone)
    return out


def changes(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[str]:
    """What the page changed, one line each: new entries, moves, statuses, new letter case, vanished."""
    def state(e: dict[str, Any]) -> str:
        return str(e.get("status") or (f"removal {e['removal']}" if e.get("removal") else "no release"))

    anchors = {str(e.get("anchor") or slug(e["title"])): e for e in old}
    before = {e["title"].casefold(): e for e in old}
    lines = []
    for e in new:
        was = anchors.get(str(e.get("anchor") or slug(e["title"]))) or before.get(e["title"].casefold())
        if e.get("vanished"):
            if was is not None and not was.get("vanished"):
                lines.append(f"- vanished: {e['title']} (was {state(was)}; last listed at {e['vanished']})")
        elif was is None:
            lines.append(f"- new: {e['title']} ({state(e)}, announced {e.get('announced') or '?'})")
        else:
            if state(was) != state(e):
                lines.append(f"- {e['title']}: {state(was)} -> {state(e)}")
            if was["title"] != e["title"]:
                lines.append(f"- retitled: {was['title']} -> {e['title']}")
    return lines


def verdicts(rows: list[dict[str, Any]]) -> list[str]:
    """The report's part on entries the page no longer lists: each with GitLab's verdict and its
    source (`verdict` in the data file), or that it still needs one."""
    gone = [e for e in rows if e.get("vanished")]
    if not gone:
        return []
    lines = ["## No longer listed: what GitLab did", ""]
    for e in gone:
        last = f"listed for {e['removal']}" if e.get("removal") else f"listed as {e.get('status') or 'pending'}"
        v = e.get("verdict")
        if not isinstance(v, dict):
            lines.append(f"- {e['title']} ({last} until {str(e['vanished'])[:7]}): no verdict yet")
            continue
        said = " ".join(str(x) for x in (v.get("status"), v.get("release")) if x)
        lines.append(f"- {e['title']} ({last} until {str(e['vanished'])[:7]}): **{said}**: "
                     f"{' '.join(str(v.get('read', '')).split())} ({v.get('source')})")
    return [*lines, ""]


def _deprecation_anchors(yaml: Any) -> dict[str, str]:
    """Anchor → URL of every recorded entry of the deprecations page (read raw: a data file with an
    undecided entry does not load through `record`)."""
    found: dict[str, str] = {}
    for path in sorted(DATA.glob("*.yaml")):
        data = yaml.load(path.read_text(encoding="utf-8"))
        if data.get("page") == DEPRECATIONS:
            for e in data["entries"]:
                if not e.get("vanished"):
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
    parsed = PARSERS[kind](page.read_text(encoding="utf-8"))
    yaml = YAML()
    previous = yaml.load(out.read_text(encoding="utf-8")) if out.exists() else {"entries": [], "source": {}}
    old, old_commit = list(previous["entries"]), str(previous["source"].get("commit", ""))
    path, url = PAGES[kind]
    rows = entries(parsed, old, {} if kind == "deprecations" else _deprecation_anchors(yaml), old_commit)
    repo = str(previous["source"].get("repo") or "gitlabhq/gitlabhq")  # the mirror the page was read in
    data = {"source": {"repo": repo, "path": path, "commit": commit}, "page": url, "entries": rows}
    yaml.width = 4096
    with out.open("w", encoding="utf-8") as f:
        f.write(HEAD.format(path=path, kind=kind, out=f"docs/record/{out.name}"))
        yaml.dump(data, f)
    report = [f"# {path}: {old_commit or 'nothing'} -> {commit}", "", *(changes(old, rows) or ["- no change"]), "",
              *verdicts(rows)]
    (out.parent / f"changes-{out.stem}.md").write_text("\n".join(report), encoding="utf-8")
    sys.stdout.write("\n".join(report))
    for e in rows:
        if not set(e) & {"same_as", "policies", "todo", "why"}:
            sys.stderr.write(f"{out.name}: {e['title']}: needs policies, todo or why\n")
        if e.get("vanished") and not e.get("verdict"):
            sys.stderr.write(f"{out.name}: {e['title']}: no longer listed: needs a verdict (what GitLab did)\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
