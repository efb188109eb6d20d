"""`--format html`: one self-contained file whose numbers equal the JSON's. No browser is installed by
the project's setup, so the file is checked by parsing it: well formed, nothing fetched at view time
(no script, no stylesheet link, no src/href to another origin), every number tagged `data-k` equal to
the JSON report of the same scan — for an instance scan (the GitLab stand-in) and a checkout scan."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from gitlab_standin import TOKEN, StandIn
from test_instance_scan import acme

from scanner.cli import main

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
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag in ("script", "link", "iframe", "object", "embed"):
            self.fetches.append(tag)
        self.fetches += [f"{k}={v}" for k, v in attrs if k in ("src", "href", "xlink:href", "srcset", "action")]
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
    return page


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
