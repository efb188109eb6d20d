"""GitLab's whole record, entry by entry: `docs/gitlab-record.md`, generated from `docs/record/*.yaml`.

Each data file transcribes one of GitLab's pages (deprecations, REST API deprecations, …) with the
commit it was read at. Every entry names the policies that detect it, or says what a policy would
match (`todo`: detectable in a file a user keeps, not covered yet), or why files cannot show it
(`why`). `python -m scanner.report.record` rewrites the table; `--check` says whether it is stale
(tests/test_gitlab_record.py runs both checks and the consistency rules in `problems`).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from scanner.core.versions import RELEASE_RE, Version

ROOT = Path(__file__).resolve().parent.parent.parent
DATA = ROOT / "docs" / "record"
OUT = ROOT / "docs" / "gitlab-record.md"
DEPRECATIONS = "https://docs.gitlab.com/update/deprecations/"

# The file a user keeps where an entry shows (the header counts per type).
TYPES = {
    "graphql": "GraphQL documents",
    "rest": "API scripts (REST)",
    "ci": "CI YAML",
    "settings": "gitlab.rb / gitlab.yml / registry",
    "cluster": "Helm / Kubernetes / runner config",
    "other-files": "security-policy YAML, agent config, other",
    "none": "not in files (UI, GitLab's database, run time, platforms)",
}
_KEYS = {"title", "anchor", "announced", "removal", "type", "policies", "todo", "why", "same_as", "status", "vanished",
         "breaks", "verdict"}
_VERDICTS = ("policies", "todo", "why")
# GitLab's status of a change when it is not a removal scheduled for `removal`: taken out of its
# milestone and reassessed (pending), canceled, or kept at its milestone with GitLab saying it will no
# longer remove the old way (withdrawn).
STATUSES = ("scheduled", "pending", "canceled", "withdrawn")
# What GitLab did with an entry its page no longer lists (`verdict.status`): removed or moved to a
# release (`verdict.release`), or one of the statuses above without a release of its own.
VERDICTS = ("removed", "moved", "pending", "canceled", "withdrawn")


class RecordError(ValueError):
    """A data file that does not follow the format, with the file and entry it is in."""


@dataclass(frozen=True, slots=True)
class Entry:
    page: str  # the page's URL, without an anchor
    source: str  # the data file's name
    title: str
    anchor: str
    announced: str | None
    removal: str | None  # None: pending, no release
    type: str
    policies: tuple[str, ...]
    todo: str
    why: str
    same_as: str = ""  # the URL of the entry of another page that is the same change (counted there)
    status: str = "scheduled"  # STATUSES
    vanished: str = ""  # the commit of the last copy of the page that listed it; "" while it is listed
    breaks: str | None = None  # the release the entry's text says things stop working, when not `removal`
    verdict: str = ""  # VERDICTS: what GitLab did with a vanished entry; `status`/`removal` follow it
    verdict_source: str = ""  # the URL of the file (at its commit), issue or merge request that says so
    verdict_read: str = ""  # what that source says, in a sentence
    listed: str | None = None  # a vanished entry's release as the page last listed it

    @property
    def url(self) -> str:
        return f"{self.page}#{self.anchor}"

    @property
    def detectable(self) -> bool:
        return bool(self.policies or self.todo)


def slug(title: str) -> str:
    """The anchor GitLab's docs give a heading: lower case, only letters, digits, `_`, `-` and
    spaces kept, each space a `-` (runs of dashes are kept: `job token - **Authorized**` gives
    `job-token---authorized`)."""
    kept = re.sub(r"[^\w\- ]", "", title.lower())
    return kept.replace(" ", "-")


def _release(value: Any, where: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not RELEASE_RE.match(value):
        raise RecordError(f"{where}: not a release (MAJOR.MINOR as a string): {value!r}")
    return value


def _status(raw: dict[str, Any], where: str) -> dict[str, Any]:
    status = raw.get("status") or ("scheduled" if raw.get("removal") or raw.get("vanished") else "pending")
    if status not in STATUSES:
        raise RecordError(f"{where}: status must be one of {', '.join(STATUSES)}, not {status!r}")
    if status in ("scheduled", "withdrawn") and not raw.get("removal"):
        raise RecordError(f"{where}: a {status} change names its release (`removal`)")
    if status in ("pending", "canceled") and raw.get("removal"):
        raise RecordError(f"{where}: a {status} change has no release; remove `removal`")
    if (vanished := raw.get("vanished")) is not None and not (isinstance(vanished, str) and vanished.strip()):
        raise RecordError(f"{where}: vanished names the commit of the last copy that listed it")
    said = {"status": status, "vanished": str(vanished or ""), "breaks": _release(raw.get("breaks"), where)}
    return said | _verdict_of(raw, status, where)


def _verdict_of(raw: dict[str, Any], status: str, where: str) -> dict[str, Any]:
    """An entry the page no longer lists needs GitLab's verdict, with its source; the entry's effective
    status and release are the verdict's, the release the page last listed is kept in `listed`."""
    verdict = raw.get("verdict")
    if not raw.get("vanished"):
        if verdict is not None:
            raise RecordError(f"{where}: a verdict is for an entry the page no longer lists (`vanished`)")
        return {}
    if not isinstance(verdict, dict):
        raise RecordError(f"{where}: the page no longer lists it: needs a `verdict` (status, source, read) "
                          f"saying what GitLab did with it")
    unknown = sorted(set(verdict) - {"status", "release", "source", "read"})
    if unknown:
        raise RecordError(f"{where}: verdict: unknown keys {', '.join(unknown)}")
    said, release = verdict.get("status"), _release(verdict.get("release"), f"{where}: verdict")
    if said not in VERDICTS:
        raise RecordError(f"{where}: verdict status must be one of {', '.join(VERDICTS)}, not {said!r}")
    if said in ("removed", "moved") and release is None:
        raise RecordError(f"{where}: verdict {said} names the release (`release`)")
    if said in ("pending", "canceled") and release is not None:
        raise RecordError(f"{where}: verdict {said} has no release; remove `release`")
    source, read = verdict.get("source"), verdict.get("read")
    if not isinstance(source, str) or not source.startswith("https://"):
        raise RecordError(f"{where}: verdict source must be the https URL of what was read")
    if not isinstance(read, str) or not read.strip():
        raise RecordError(f"{where}: verdict read says what the source says")
    listed = raw.get("removal") if status in ("scheduled", "withdrawn") else None
    if said == "withdrawn":
        release = release or listed
    effective = "scheduled" if said in ("removed", "moved") else said
    return {"status": effective, "removal": release, "verdict": said, "verdict_source": source,
            "verdict_read": " ".join(read.split()), "listed": listed}


def _entry(raw: Any, page: str, source: str, n: int) -> Entry:
    where = f"{source}: entry {n}"
    if not isinstance(raw, dict):
        raise RecordError(f"{where}: not a mapping")
    title = raw.get("title")
    if not isinstance(title, str) or not title.strip():
        raise RecordError(f"{where}: no title")
    where = f"{source}: entry {n} ({title})"
    unknown = sorted(set(raw) - _KEYS)
    if unknown:
        raise RecordError(f"{where}: unknown keys {', '.join(unknown)}")
    same_as = raw.get("same_as")
    if same_as is not None:
        if not isinstance(same_as, str) or not same_as.startswith("https://") or "#" not in same_as:
            raise RecordError(f"{where}: same_as must be the URL (with #anchor) of another page's entry")
        given = [k for k in ("type", *_VERDICTS) if raw.get(k)]
        if given:
            raise RecordError(f"{where}: same_as takes its type and verdict from that entry; remove {given}")
        return Entry(page=page, source=source, title=title.strip(), anchor=str(raw.get("anchor") or slug(title)),
                     announced=_release(raw.get("announced"), where),
                     **({"removal": _release(raw.get("removal"), where)} | _status(raw, where)),
                     type="none", policies=(), todo="", why="", same_as=same_as)
    if raw.get("type") not in TYPES:
        raise RecordError(f"{where}: type must be one of {', '.join(TYPES)}, not {raw.get('type')!r}")
    given = [k for k in _VERDICTS if raw.get(k)]
    if len(given) != 1:
        raise RecordError(f"{where}: needs exactly one of policies (ids that detect it), todo (what a policy "
                          f"would match) or why (why files cannot show it); has {given or 'none'}")
    policies = raw.get("policies") or []
    if not isinstance(policies, list) or not all(isinstance(p, str) for p in policies):
        raise RecordError(f"{where}: policies must be a list of policy ids")
    if raw["type"] == "none" and not raw.get("why"):
        raise RecordError(f"{where}: type none (not in files) needs a why")
    return Entry(
        page=page, source=source, title=title.strip(), anchor=str(raw.get("anchor") or slug(title)),
        announced=_release(raw.get("announced"), where),
        type=raw["type"], policies=tuple(policies), todo=str(raw.get("todo") or ""), why=str(raw.get("why") or ""),
        **({"removal": _release(raw.get("removal"), where)} | _status(raw, where)),
    )


def load_file(path: Path) -> tuple[dict[str, str], list[Entry]]:
    """A data file's source (repo, path, commit), page and entries."""
    from ruamel.yaml import YAML

    data = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("entries"), list):
        raise RecordError(f"{path.name}: needs `source`, `page` and a list of `entries`")
    source, page = data.get("source"), data.get("page")
    if not isinstance(source, dict) or not {"repo", "path", "commit"} <= set(source):
        raise RecordError(f"{path.name}: `source` needs repo, path and commit")
    if not isinstance(page, str) or not page.startswith("https://"):
        raise RecordError(f"{path.name}: `page` must be the page's https URL")
    entries = [_entry(raw, page, path.name, n) for n, raw in enumerate(data["entries"], start=1)]
    return {k: str(v) for k, v in source.items()}, entries


def load_record(folder: Path = DATA) -> tuple[list[dict[str, str]], list[Entry]]:
    sources: list[dict[str, str]] = []
    entries: list[Entry] = []
    for path in sorted(folder.glob("*.yaml")):
        source, found = load_file(path)
        sources.append(source | {"page": found[0].page if found else "", "entries": str(len(found))})
        entries += found
    return sources, resolve(entries)


def resolve(entries: list[Entry]) -> list[Entry]:
    """Each `same_as` entry takes the type and verdict of the entry it names (unknown: left as is,
    `problems` reports it)."""
    by_url = {e.url: e for e in entries if not e.same_as}
    return [replace(e, type=t.type, policies=t.policies, todo=t.todo, why=t.why)
            if e.same_as and (t := by_url.get(e.same_as)) else e for e in entries]


def problems(entries: list[Entry], policy_ids: set[str]) -> list[str]:
    """Policy ids that do not exist, and entries listed twice on one page."""
    found = [f"{e.source}: {e.title}: no policy {p!r}" for e in entries for p in e.policies if p not in policy_ids]
    urls = {e.url for e in entries if not e.same_as}
    found += [f"{e.source}: {e.title}: same_as names no recorded entry ({e.same_as})"
              for e in entries if e.same_as and e.same_as not in urls]
    seen: set[tuple[str, str, str]] = set()
    for e in entries:
        if (e.page, e.anchor, e.title) in seen:
            found.append(f"{e.source}: {e.title}: listed twice (anchor {e.anchor})")
        seen.add((e.page, e.anchor, e.title))
    return found


def contradictions(entries: list[Entry], removals: dict[str, tuple[str, str | None]]) -> list[str]:
    """Policies whose release or status is not what GitLab's record says: `removals` maps a policy id to
    its effective (status, release). A policy agrees with the record when it equals one of the entries
    that name it (a policy may cover entries of several pages, such as a REST v5 entry and the removal
    that came first)."""
    said: dict[str, set[tuple[str, str | None]]] = {}
    for e in entries:
        for pid in e.policies:
            said.setdefault(pid, set()).update({(e.status, e.removal if e.status == "scheduled" else None)}
                                               | ({("scheduled", e.breaks)} if e.breaks else set()))
    found = []
    for pid, states in sorted(said.items()):
        status, release = removals.get(pid, ("?", None))
        mine = (status, release if status == "scheduled" else None)
        if pid in removals and mine not in states:
            told = ", ".join(sorted(f"{s} {r}" if r else s for s, r in states))
            found.append(f"{pid}: {status} {release or ''}".rstrip() + f", but GitLab's record says {told}")
    return found


def counts(entries: list[Entry]) -> dict[str, tuple[int, int, int]]:
    """File type → (entries, detectable, covered); a `same_as` entry is counted once, at the entry it names."""
    table: dict[str, tuple[int, int, int]] = {}
    for kind in TYPES:
        mine = [e for e in entries if e.type == kind and not e.same_as]
        table[kind] = (len(mine), sum(e.detectable for e in mine), sum(bool(e.policies) for e in mine))
    return table


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _verdict(e: Entry) -> str:
    if e.same_as:
        return f"same change as [{e.same_as.split('#', 1)[1]}]({e.same_as}); " + _verdict(replace(e, same_as=""))
    if e.policies:
        return ", ".join(f"[{p}](policies/{p}.md)" for p in e.policies)
    return f"not yet: {_cell(e.todo)}" if e.todo else f"— {_cell(e.why)}"


def _order(e: Entry) -> tuple[int, Version, str]:
    return (0 if e.removal is None else 1, Version(0, 0) if e.removal is None else Version.parse(e.removal), e.title)


def _when(e: Entry) -> str:
    said = ", ".join(x for x in (e.removal, "" if e.status == "scheduled" else e.status) if x)
    said += f" (breaks in {e.breaks})" if e.breaks else ""
    if not e.vanished:
        return said
    was = f"listed for {e.listed}" if e.listed else "listed"
    return f"{_verdict_word(e)} ({was} until `{e.vanished[:7]}`; see below)"


def _verdict_word(e: Entry) -> str:
    """`removed 19.0`, `moved 20.0`, or the status (pending, canceled, withdrawn)."""
    return f"{e.verdict} {e.removal}" if e.verdict in ("removed", "moved") and e.removal else e.verdict


def _vanished(entries: list[Entry]) -> list[str]:
    """The verdicts table: each entry a page no longer lists, what GitLab did with it and the source."""
    gone = sorted((e for e in entries if e.vanished), key=lambda e: (e.page, _order(e), e.title))
    if not gone:
        return []
    return [
        "## Entries GitLab's pages no longer list",
        "",
        "GitLab's deprecations page is compiled from one YAML file per entry, and a change GitLab made stays",
        "listed under its release. An entry that is gone was taken back: its file was deleted. Each row says",
        "what GitLab did instead, read in the source it links; the entry's status above is this verdict, and",
        "the policies naming it follow it (`tests/test_gitlab_record.py`).",
        "",
        "| Entry | Last listed | Verdict | Source |",
        "|---|---|---|---|",
        *[f"| [{_cell(e.title)}]({e.url}) | {e.listed or 'no release'} at `{e.vanished[:7]}` | "
          f"**{_verdict_word(e)}**: {_cell(e.verdict_read)} | "
          f"[{_cell(_short(e.verdict_source))}]({e.verdict_source}) |" for e in gone],
        "",
    ]


def _short(url: str) -> str:
    """A source's link text: `gitlab-org/gitlab!187829`, `gitlab-org/gitlab#525239`, or `repo@commit:path`."""
    if m := re.match(r"https://gitlab\.com/([^/]+/[^/]+(?:/[^/]+)?)/-/(merge_requests|issues|work_items)/(\d+)", url):
        return f"{m.group(1)}{'!' if m.group(2) == 'merge_requests' else '#'}{m.group(3)}"
    if m := re.match(r"https://github\.com/([^/]+/[^/]+)/blob/([0-9a-f]{7})[0-9a-f]*/(.+)", url):
        return f"{m.group(1)}@{m.group(2)}:{m.group(3)}"
    return url


def render(sources: list[dict[str, str]], entries: list[Entry]) -> str:
    table = counts(entries)
    detectable, covered = sum(d for _, d, _ in table.values()), sum(c for _, _, c in table.values())
    same = sum(bool(e.same_as) for e in entries)
    lines = [
        "# GitLab's record, entry by entry",
        "",
        "Generated by `python -m scanner.report.record` from `docs/record/*.yaml`; do not edit by hand.",
        "Each entry of GitLab's pages below names the sunset policies that detect it, what a policy would",
        "match where none does yet (**not yet**), or why the files a user keeps cannot show it (—).",
        "",
        "Sources (GitLab's monorepo, read in the mirror each line names):",
        "",
        *[f"- [{s['path']}]({s['page']}) in `{s.get('repo', '?')}` at commit `{s['commit']}`: "
          f"{s.get('entries', '?')} entries" for s in sources],
        "",
        "The Removal column is GitLab's release, or its status when the change is not scheduled: *pending*",
        "(taken out of its milestone and reassessed), *canceled*, or *withdrawn* (kept at its milestone, but",
        "GitLab says the old way keeps working). An entry the newest copy of a page no longer lists shows",
        "GitLab's verdict on it (the table at the end: what GitLab did, and where that is written).",
        "`tests/test_gitlab_record.py` fails when a policy's release or status is not what the entries",
        "naming it say.",
        "",
        "An entry of one page that is the same change as an entry of another (a removal GitLab announced",
        "on the deprecations page) says so (*same change as*), takes that entry's file type and policies,",
        "and is counted once, there: the numbers below count changes, not lines of the tables.",
        "",
        f"{len(entries) - same} entries ({len(entries)} lines, {same} of them the same change as another "
        f"page's entry); {detectable} detectable from files; {covered} covered by a policy "
        f"({round(100 * covered / detectable) if detectable else 0}%).",
        "",
        "| File type | Entries | Detectable | Covered |",
        "|---|---:|---:|---:|",
        *[f"| {TYPES[k]} | {n} | {d} | {c} |" for k, (n, d, c) in table.items()],
        "",
    ]
    for page in dict.fromkeys(e.page for e in entries):
        mine = sorted((e for e in entries if e.page == page), key=_order, reverse=True)
        lines += [f"## {page}", "", "| Removal | Entry | Announced | File type | Policies |", "|---|---|---|---|---|"]
        lines += [f"| {_when(e)} | [{_cell(e.title)}]({e.url}) | {e.announced or '—'} | {e.type} | "
                  f"{_verdict(e)} |" for e in mine]
        lines.append("")
    return "\n".join(lines + _vanished(entries))


def main(argv: list[str]) -> int:
    """`python -m scanner.report.record [--check]`: write docs/gitlab-record.md, or say if it is stale."""
    sources, entries = load_record()
    text = render(sources, entries)
    if "--check" in argv:
        stale = not OUT.exists() or OUT.read_text(encoding="utf-8") != text
        if stale:
            sys.stderr.write(f"{OUT}: stale; run `python -m scanner.report.record`\n")
        return 1 if stale else 0
    OUT.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
