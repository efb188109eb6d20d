"""Recall and precision of `sunset scan` on a set of real files from public projects, measured by hand.

The set is not in the repository: `docs/recall/sources.tsv` names every file (repository, path, commit,
its kind and its sha256), and this script re-creates it (`--from-mirrors DIR`, from local git
directories) or prints the commands that fetch it (`--fetch-list`). `docs/recall/expected.tsv` is the
list of every deprecated or removed usage present in those files, read against GitLab's record by a
person; `docs/recall/verdicts.tsv` says why each finding sunset reports outside that list is wrong.

A measurement scans each project's folder of the set as its user would (`sunset scan .` in it, the
folder taken for the checkout: mode `folder`); then the same with a `kinds:` configuration that
declares each file's kind where recognition cannot decide it (mode `kinds`, `sunset_kind` of
`sources.tsv`); then every file named on the command line (mode `files`). A row of
the list is found when a finding of its policy lies on its lines in its file. Findings that match no
row are false positives when `verdicts.tsv` says so, and *unreviewed* otherwise (a person must look:
a usage missing from the list, or a false positive):

    .venv/bin/python bench/recall.py --set /work/recall-set            # the table and the figures
    .venv/bin/python bench/recall.py --set DIR --markdown               # the same, as docs/recall.md tables
    .venv/bin/python bench/recall.py --fetch-list                       # shell commands that fetch the set
    .venv/bin/python bench/recall.py --from-mirrors M --set DIR         # copy the set out of local clones

`--from-mirrors M` looks for each repository's git directory at `M/<owner>+<repo>/repo`,
`M/<owner>+<repo>/repo/.git`, `M/<owner>/<repo>.git` or `M/<owner>/<repo>/.git`, writes each file
at `DIR/<owner>__<repo>/<path>` and checks its sha256 against `sources.tsv`.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
RECALL_DIR = REPO_ROOT / "docs" / "recall"


@dataclass(frozen=True)
class Source:
    repo: str
    path: str
    commit: str
    date: str
    kind: str
    sunset_kind: str  # the kind a user would declare under `kinds:` (`-`: none fits)
    sha256: str

    @property
    def folder(self) -> str:
        return self.repo.replace("/", "__")

    @property
    def file(self) -> str:
        return f"{self.folder}/{self.path}"


@dataclass(frozen=True)
class Row:
    """One deprecated usage present in one file of the set."""

    file: str
    first: int
    last: int
    usage: str
    entry: str
    release: str
    policy: str  # `-`: no policy of sunset's catalog is meant to find it
    note: str
    case: str  # its regression case in tests/recall/cases.yaml

    def covers(self, file: str, line: int, policy: str) -> bool:
        return file == self.file and policy == self.policy and self.first <= line <= self.last


@dataclass(frozen=True)
class Finding:
    file: str
    line: int
    column: int
    policy: str


@dataclass
class Result:
    mode: str
    found: dict[int, list[Finding]] = field(default_factory=dict)  # row index -> its findings
    false_positive: list[tuple[Finding, str]] = field(default_factory=list)
    unreviewed: list[Finding] = field(default_factory=list)
    input_errors: Counter[str] = field(default_factory=Counter)
    not_scanned: list[str] = field(default_factory=list)  # folders/files sunset found nothing in


def read_tsv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))


def load_sources(path: Path) -> list[Source]:
    return [
        Source(r["repo"], r["path"], r["commit"], r["date"], r["kind"], r["sunset_kind"], r["sha256"])
        for r in read_tsv(path)
    ]


def load_rows(path: Path) -> list[Row]:
    rows = []
    for r in read_tsv(path):
        first, _, last = r["lines"].partition("-")
        rows.append(
            Row(
                r["file"],
                int(first),
                int(last or first),
                r["usage"],
                r["entry"],
                r["release"],
                r["policy"],
                r["note"],
                r["case"],
            )
        )
    return rows


def load_verdicts(path: Path) -> dict[tuple[str, int, str], str]:
    if not path.exists():
        return {}
    return {(r["file"], int(r["line"]), r["policy"]): r["reason"] for r in read_tsv(path)}


def default_sunset() -> str:
    candidate = Path(sys.executable).with_name("sunset")
    return str(candidate) if candidate.exists() else "sunset"


def scan(sunset: str, args: Sequence[str], cwd: Path) -> dict[str, object]:
    """`sunset scan ARGS --format json --exit-zero`; any other status than 0 means sunset could not run."""
    proc = subprocess.run(
        [sunset, "scan", *args, "--format", "json", "--exit-zero"], cwd=cwd, capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise SystemExit(f"sunset scan {' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()}")
    report: dict[str, object] = json.loads(proc.stdout)
    return report


def findings_of(report: dict[str, object], prefix: str) -> Iterable[Finding]:
    for f in report["findings"]:  # type: ignore[attr-defined]
        yield Finding(f"{prefix}/{f['path']}" if prefix else f["path"], f["line"], f["column"], f["rule_id"])


def measure(
    mode: str,
    set_dir: Path,
    sources: list[Source],
    rows: list[Row],
    verdicts: dict[tuple[str, int, str], str],
    sunset: str,
) -> Result:
    result = Result(mode)
    findings: list[Finding] = []
    folders = sorted({s.folder for s in sources})
    for folder in folders:
        base = set_dir / folder
        if mode == "folder":
            report = scan(sunset, ["."], base)
            if not report["summary"]["files_scanned"]:  # type: ignore[index]
                result.not_scanned.append(folder)
        elif mode == "kinds":
            declared = {s.path: s.sunset_kind for s in sources if s.folder == folder and s.sunset_kind != "-"}
            with tempfile.TemporaryDirectory(prefix="recall-") as tmp:
                config = Path(tmp, "sunset.yml")
                config.write_text(json.dumps({"kinds": declared}), encoding="utf-8")
                report = scan(sunset, [".", "--config", str(config)], base)
            if not report["summary"]["files_scanned"]:  # type: ignore[index]
                result.not_scanned.append(folder)
        else:
            names = [s.path for s in sources if s.folder == folder]
            report = scan(sunset, names, base)
        findings.extend(findings_of(report, folder))
        for error in report["errors"]:  # type: ignore[attr-defined]
            result.input_errors[f"{folder}/{error['path']}"] += 1
    for finding in findings:
        hits = [i for i, row in enumerate(rows) if row.covers(finding.file, finding.line, finding.policy)]
        for i in hits:
            result.found.setdefault(i, []).append(finding)
        if hits:
            continue
        reason = verdicts.get((finding.file, finding.line, finding.policy))
        if reason is None:
            result.unreviewed.append(finding)
        else:
            result.false_positive.append((finding, reason))
    return result


def ratio(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.0f} %)" if whole else "–"


def figures(result: Result, rows: list[Row], kinds: dict[str, str]) -> list[tuple[str, str, str]]:
    """(kind, recall, precision), overall first; a finding counts once for precision."""
    lines = []
    groups: dict[str, list[int]] = defaultdict(list)
    for i, row in enumerate(rows):
        groups[kinds.get(row.file, "?")].append(i)
    fp_by_kind: Counter[str] = Counter(kinds.get(f.file, "?") for f, _ in result.false_positive)
    tp_by_kind: Counter[str] = Counter()
    seen: set[Finding] = set()
    for hits in result.found.values():
        for f in hits:
            if f not in seen:
                seen.add(f)
                tp_by_kind[kinds.get(f.file, "?")] += 1
    for kind in ["all", *sorted(groups)]:
        members = range(len(rows)) if kind == "all" else groups[kind]
        tp = sum(tp_by_kind.values()) if kind == "all" else tp_by_kind[kind]
        fp = sum(fp_by_kind.values()) if kind == "all" else fp_by_kind[kind]
        found = sum(1 for i in members if i in result.found)
        lines.append((kind, ratio(found, len(members)), ratio(tp, tp + fp)))
    return lines


def load_causes(path: Path) -> dict[tuple[str, str, int], str]:
    """(case, policy, row) -> why it is missed today, from the regression cases (policy `-`: a
    policy-less row; row 0: every row of that case and policy without a `row:` of its own)."""
    from ruamel.yaml import YAML

    causes: dict[tuple[str, str, int], str] = {}
    for name, spec in YAML(typ="safe").load(path.read_text(encoding="utf-8")).items():
        for item in spec.get("missed", []):
            causes.setdefault((name, item["policy"] or "-", int(item.get("row", 0))), item["why"])
    return causes


def cause_table(result: Result, rows: list[Row], causes: dict[tuple[str, str, int], str]) -> list[str]:
    """Missed rows grouped by the cause their case names (the words before its first colon)."""
    groups: dict[str, list[Row]] = defaultdict(list)
    for i, row in enumerate(rows):
        if i not in result.found:
            why = causes.get((row.case, row.policy, row.first)) or causes.get(
                (row.case, row.policy, 0), "no case says why"
            )
            groups[why.split(":")[0].split(";")[0]].append(row)
    out = ["| cause | rows | example |", "|---|---:|---|"]
    for cause, members in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        first = members[0]
        example = f"`{first.file}:{first.first}` {first.usage} ({first.policy})".replace("|", "\\|")
        out.append(f"| {cause} | {len(members)} | {example} |")
    return out


def render(
    results: list[Result],
    rows: list[Row],
    sources: list[Source],
    causes: dict[tuple[str, str, int], str],
    markdown: bool,
) -> str:
    kinds = {s.file: s.kind for s in sources}
    out: list[str] = []
    projects = len({s.repo for s in sources})
    out.append(f"{len(sources)} files from {projects} projects; {len(rows)} deprecated usages listed.")
    for r in results:
        out.append("")
        out.append(f"### Scanning by {r.mode}")
        out.append("")
        out.append("| kind | recall | precision |")
        out.append("|---|---|---|")
        for kind, rec, prec in figures(r, rows, kinds):
            out.append(f"| {kind} | {rec} | {prec} |")
        if r.mode == "folder":  # the causes in cases.yaml are those of a folder scan
            out.append("")
            out.append("Misses by cause:")
            out.append("")
            out.extend(cause_table(r, rows, causes))
        if r.false_positive:
            out.append("")
            out.append("False positives:")
            for f, reason in r.false_positive:
                out.append(f"- `{f.file}:{f.line}:{f.column}` {f.policy} — {reason}")
        if r.unreviewed:
            out.append("")
            out.append("Unreviewed findings (not in expected.tsv, no verdict):")
            for f in r.unreviewed:
                out.append(f"- `{f.file}:{f.line}:{f.column}` {f.policy}")
        if r.input_errors:
            out.append("")
            errors = ", ".join(f"`{name}` {count}" for name, count in sorted(r.input_errors.items()))
            out.append(f"Input errors: {sum(r.input_errors.values())} ({errors})")
        if r.not_scanned:
            out.append("")
            out.append("Folders where sunset found no GitLab file: " + ", ".join(f"`{n}`" for n in r.not_scanned))
    out.append("")
    out.append("### Every usage")
    out.append("")
    head = ["file", "lines", "usage", "GitLab entry", "release", "policy", *[r.mode for r in results]]
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "---|" * len(head))
    for i, row in enumerate(rows):
        marks = []
        for r in results:
            hits = r.found.get(i)
            marks.append(", ".join(f"{f.line}:{f.column}" for f in hits) if hits else "**missed**")
        lines = f"{row.first}" if row.first == row.last else f"{row.first}–{row.last}"
        cells = [f"`{row.file}`", lines, row.usage, row.entry, row.release, row.policy, *marks]
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    text = "\n".join(out)
    return text if markdown else text.replace("**missed**", "MISSED")


def git_dir(mirrors: Path, repo: str) -> Path | None:
    owner, name = repo.split("/", 1)
    for candidate in (
        mirrors / f"{owner}+{name}" / "repo" / ".git",
        mirrors / f"{owner}+{name}" / "repo",
        mirrors / owner / f"{name}.git",
        mirrors / owner / name / ".git",
    ):
        if (candidate / "HEAD").exists():
            return candidate
    return None


def from_mirrors(mirrors: Path, set_dir: Path, sources: list[Source]) -> int:
    """Write every file of the set from local git directories; 1 when one is missing or differs."""
    status = 0
    for s in sources:
        where = git_dir(mirrors, s.repo)
        if where is None:
            print(f"no git directory for {s.repo} under {mirrors}", file=sys.stderr)
            status = 1
            continue
        proc = subprocess.run(["git", f"--git-dir={where}", "show", f"{s.commit}:{s.path}"], capture_output=True)
        if proc.returncode != 0:
            print(f"{s.repo}@{s.commit[:10]}:{s.path}: {proc.stderr.decode().strip()}", file=sys.stderr)
            status = 1
            continue
        if hashlib.sha256(proc.stdout).hexdigest()[: len(s.sha256)] != s.sha256:
            print(f"{s.file}: sha256 differs from sources.tsv", file=sys.stderr)
            status = 1
            continue
        target = set_dir / s.file
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(proc.stdout)
    return status


def fetch_list(sources: list[Source]) -> str:
    """Shell commands that clone each repository once and copy out its files at their commits."""
    lines = ["set -e", 'SET="${SET:-recall-set}"', 'CLONES="${CLONES:-recall-clones}"']
    for repo in sorted({s.repo for s in sources}):
        owner, name = repo.split("/", 1)
        clone = f'"$CLONES/{owner}/{name}.git"'
        lines.append(f"[ -d {clone} ] || git clone --quiet --bare https://github.com/{repo}.git {clone}")
        for s in (s for s in sources if s.repo == repo):
            lines.append(f'mkdir -p "$SET/{Path(s.file).parent}"')
            lines.append(f'git --git-dir={clone} show {s.commit}:{s.path} > "$SET/{s.file}"')
    lines.append('echo "then: bench/recall.py --set $SET"')
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", type=Path, help="the folder holding <owner>__<repo>/<path> for every source")
    parser.add_argument("--sources", type=Path, default=RECALL_DIR / "sources.tsv")
    parser.add_argument("--expected", type=Path, default=RECALL_DIR / "expected.tsv")
    parser.add_argument("--verdicts", type=Path, default=RECALL_DIR / "verdicts.tsv")
    parser.add_argument("--cases", type=Path, default=REPO_ROOT / "tests" / "recall" / "cases.yaml")
    parser.add_argument("--sunset", default=default_sunset(), help="the sunset command (default: next to python)")
    parser.add_argument("--mode", choices=["folder", "kinds", "files", "all"], default="all")
    parser.add_argument("--markdown", action="store_true", help="print Markdown (as in docs/recall.md)")
    parser.add_argument("--fetch-list", action="store_true", help="print the commands that fetch the set")
    parser.add_argument("--from-mirrors", type=Path, help="re-create the set from local git directories")
    args = parser.parse_args(argv)
    sources = load_sources(args.sources)
    if args.fetch_list:
        print(fetch_list(sources))
        return 0
    if args.set is None:
        parser.error("--set is required")
    if args.from_mirrors is not None:
        return from_mirrors(args.from_mirrors, args.set, sources)
    missing = [s.file for s in sources if not (args.set / s.file).is_file()]
    if missing:
        raise SystemExit(f"{len(missing)} files of the set are missing under {args.set}, e.g. {missing[0]}")
    rows = load_rows(args.expected)
    unknown = sorted({r.file for r in rows} - {s.file for s in sources})
    if unknown:
        raise SystemExit(f"expected.tsv names files that sources.tsv does not: {unknown}")
    verdicts = load_verdicts(args.verdicts)
    modes = ["folder", "kinds", "files"] if args.mode == "all" else [args.mode]
    results = [measure(m, args.set.resolve(), sources, rows, verdicts, args.sunset) for m in modes]
    causes = load_causes(args.cases)
    print(render(results, rows, sources, causes, args.markdown))
    return 0


if __name__ == "__main__":
    sys.exit(main())
