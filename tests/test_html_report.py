"""`--format html`: one self-contained file whose numbers equal the JSON's, checked by parsing it (and in
Chromium: tests/test_html_browser.py): well formed, nothing fetched at view time (no script, no
stylesheet link, no src to another origin), links only to GitLab's documentation and sunset's own, every
number tagged `data-k` equal to the JSON report of the same scan — for an instance scan (the GitLab
stand-in) and a checkout scan — and for each policy its fix, its links and whether `sunset fix`
rewrites it; each row's readiness follows from its findings."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from gitlab_standin import TOKEN, StandIn
from test_instance_scan import acme

from scanner.cli import main
from scanner.rules.policy import Policy

from conftest import ROOT

VOID = {"meta", "br", "img", "hr", "input", "link", "rect", "path", "circle", "line"}


class Page(HTMLParser):
    """The numbers of the page by where they are: summary cards, rows of a table keyed by `data-*`."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.row: tuple[str, str] | None = None
        self.key: str | None = None
        self.cards: dict[str, int] = {}
        self.rows: dict[tuple[str, str], dict[str, int]] = {}
        self.fetches: list[str] = []
        self.links: list[str] = []  # every <a href>: documentation, opened only when clicked
        self.problems: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag in ("script", "link", "iframe", "object", "embed"):
            self.fetches.append(tag)
        if tag == "a":
            self.links.append(a.get("href") or "")
        self.fetches += [f"{k}={v}" for k, v in attrs if k in ("src", "href", "xlink:href", "srcset", "action")
                         and not (tag == "a" and k == "href")]
        if tag == "tr":
            for k in ("data-unit", "data-file"):
                if a.get(k):
                    self.row = (k, a[k] or "")
                    self.rows[self.row] = {}
        self.key = a.get("data-k")
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
            return
        self.stack.pop()
        if tag == "tr":
            self.row = None

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self.key is None:
            return
        value = int(data)
        if self.row is None:
            if "table" not in self.stack:
                self.cards[self.key] = value
        else:
            self.rows[self.row][self.key] = value
        self.key = None


def parse(text: str) -> Page:
    page = Page()
    page.feed(text)
    page.close()
    assert page.problems == [] and page.stack == []
    assert page.fetches == []
    assert "url(" not in text and "@import" not in text
    assert page.links and [u for u in page.links if not documentation(u)] == []
    return page


def documentation(url: str) -> bool:
    """GitLab's documentation, or a page of sunset's own docs that exists in this checkout."""
    from scanner.report.html import DOCS

    if url.startswith("https://docs.gitlab.com/"):
        return True
    return url.startswith(DOCS + "/") and (ROOT / "docs" / url.removeprefix(DOCS + "/").split("#")[0]).is_file()


def both(args: list[str], tmp: Path) -> tuple[Page, dict[str, Any]]:
    assert main([*args, "--format", "json", "--output", str(tmp / "r.json")]) == 1
    assert main([*args, "--format", "html", "--output", str(tmp / "r.html")]) == 1
    return parse((tmp / "r.html").read_text(encoding="utf-8")), json.loads((tmp / "r.json").read_text())


def test_instance_report_numbers_equal_the_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SUNSET_GITLAB_TOKEN", TOKEN)
    inst = acme()
    with StandIn(inst) as url:
        page, data = both(["scan", "--gitlab", url, "--group", "acme", "--target", "18.0",
                           "--cache-dir", str(tmp_path / "cache")], tmp_path)
    s = data["summary"]
    breaking = {f["path"] for f in data["findings"] if f["removed_in"] and float(f["removed_in"]) <= 18.0}
    broken = [p["project"] for p in data["projects"] if breaking & {u["path"] for u in p["files"]}]
    assert broken == ["acme/apps/api", "acme/apps/custom", "acme/apps/web"]
    assert page.cards == {
        "units": len(data["projects"]), "breaking": len(broken), "findings": s["findings"],
        "error": s["by_severity"]["error"],
        "warning": s["by_severity"]["warning"], "info": s["by_severity"]["info"], "files": s["files_scanned"],
        "input-errors": s["errors"],
    }
    units = {name: counts for (kind, name), counts in page.rows.items() if kind == "data-unit"}
    problems = {p["project"]: sum(1 for e in data["errors"] if e["path"].partition("@")[0] == p["project"])
                for p in data["projects"]}
    assert units == {p["project"]: p["findings"] | {"problems": problems[p["project"]]} for p in data["projects"]}
    assert {k: v for k, v in problems.items() if v} == {"acme/apps/api": 2, "acme/apps/locked": 1,
                                                         "acme/platform/ci-templates": 1, "acme/platform/forbidden": 1}
    blast = {name: counts for (kind, name), counts in page.rows.items() if kind == "data-file"}
    assert blast == {f["path"]: {"projects": len({p["project"] for p in f["projects"]}), "findings": f["findings"]}
                     for f in data["shared_files"] if f["findings"]}
    assert blast == {"acme/platform/ci-templates@main:build.yml": {"projects": 2, "findings": 1}}


def test_checkout_report_numbers_equal_the_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    page, data = both(["scan", "samples", "--target", "18.0"], tmp_path)
    s = data["summary"]
    files = {f["path"] for f in data["findings"]}
    assert page.cards["units"] == len(files)
    assert (page.cards["findings"], page.cards["error"], page.cards["warning"], page.cards["info"]) == (
        s["findings"], s["by_severity"]["error"], s["by_severity"]["warning"], s["by_severity"]["info"])
    units = {name: counts for (_, name), counts in page.rows.items()}
    for path in files:
        mine = [f["severity"] for f in data["findings"] if f["path"] == path]
        assert units[path] == {k: mine.count(k) for k in ("error", "warning", "info")} | {"problems": 0}


def test_the_project_link_is_the_projects_homepage() -> None:
    import tomllib

    from scanner.report.html import DOCS, PROJECT

    homepage = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["urls"]["Homepage"]
    assert (homepage, f"{homepage}/-/blob/main/docs") == (PROJECT, DOCS)


class Rows(HTMLParser):
    """The cells of every row of one table, as text, and the links in each cell."""

    def __init__(self, table: str) -> None:
        super().__init__()
        self.table, self.inside, self.rows = table, False, []  # type: ignore[var-annotated]
        self.cell: list[str] | None = None
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.inside = dict(attrs).get("id") == self.table
        elif self.inside and tag == "tr":
            self.rows.append([])
        elif self.inside and tag in ("td", "th"):
            self.cell = []
        elif self.inside and tag == "a" and self.cell is not None:
            self.cell.append(f"<{dict(attrs).get('href')}>")

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self.inside = False
        elif self.inside and tag in ("td", "th") and self.cell is not None:
            self.rows[-1].append("".join(self.cell).strip())
            self.cell = None

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)


def table(html: str, name: str) -> list[list[str]]:
    rows = Rows(name)
    rows.feed(html)
    return rows.rows  # type: ignore[no-any-return]


def test_each_policy_has_its_fix_its_links_and_the_fix_marker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, policies: list[Policy]
) -> None:
    from scanner.report.html import DOCS, FIX_SENTENCE
    from scanner.report.options import fix_tiers

    monkeypatch.chdir(ROOT)
    _, data = both(["scan", "samples", "--target", "18.0"], tmp_path)
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    rows = table(html, "policies")
    assert rows[0] == ["policy", "title", "removed in", "findings", "files", "fix", "GitLab"]
    tiers = fix_tiers(policies)
    first: dict[str, dict[str, Any]] = {}
    for f in data["findings"]:
        first.setdefault(f["rule_id"], f)
    assert sorted(r[0].split(">", 1)[1] for r in rows[1:]) == sorted(first)  # every policy found, once
    for policy_cell, _, _, _, _, fix, gitlab in rows[1:]:
        pid = policy_cell.split(">", 1)[1]
        assert policy_cell == f"<{DOCS}/policies/{pid}.md>{pid}"
        assert gitlab == f"<{first[pid]['docs_url']}>GitLab docs"
        mark = {"safe": "[*] ", "unsafe": "(*) "}.get(tiers.get(pid, ""), "")
        assert fix == mark + (first[pid]["replacement"] or "—")
    assert {"[*] ", "(*) "} <= {r[5][:4] for r in rows[1:]}  # the samples hold both kinds
    assert FIX_SENTENCE in html and "<code>sunset fix</code> rewrites these findings in place" in FIX_SENTENCE


def test_readiness_follows_from_each_rows_findings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SUNSET_GITLAB_TOKEN", TOKEN)
    with StandIn(acme()) as url:
        _, data = both(["scan", "--gitlab", url, "--group", "acme", "--target", "18.0",
                        "--cache-dir", str(tmp_path / "cache")], tmp_path)
    rows = table((tmp_path / "r.html").read_text(encoding="utf-8"), "units")
    assert rows[0][:3] == ["project", "readiness for 18.0", "breaks at"]
    shown = {r[0]: r[1] for r in rows[1:]}
    errors = {p["project"]: any(e["path"].partition("@")[0] == p["project"] for e in data["errors"])
              for p in data["projects"]}
    for p in data["projects"]:
        counts = p["findings"]
        expected = (f"not scanned: {p['status']}" if p["status"] != "scanned" else "breaks on 18.0" if counts["error"]
                    else "unknown: some files could not be read" if errors[p["project"]]
                    else "ready; deprecations to plan for" if counts["warning"] else "ready")
        assert shown[p["project"]] == expected, p["project"]
    assert len(set(shown.values())) >= 4  # not one word on every row
