"""`--format html` opened in a real headless browser (Debian's chromium, tests/browser.py): the page
renders (the DOM chromium built, a screenshot), its console is empty (no error, no
Content-Security-Policy violation: the report forbids every fetch), and the numbers in the rendered DOM
equal the JSON report's — for a checkout scan of the samples and an instance scan of the GitLab
stand-in. A page with a console error and a blocked fetch shows the console check sees both. Every link
goes to GitLab's documentation or sunset's; no chart label is laid out outside its chart."""

from __future__ import annotations

import json
import re
from html import unescape as html_unescape
from pathlib import Path
from typing import Any

import pytest
from browser import PNG, render
from gitlab_standin import TOKEN, StandIn
from test_html_report import Page, documentation, parse
from test_instance_scan import acme

from scanner.cli import main

from conftest import ROOT


def opened(args: list[str], tmp: Path) -> tuple[Page, dict[str, Any]]:
    assert main([*args, "--format", "json", "--output", str(tmp / "r.json")]) == 1
    assert main([*args, "--format", "html", "--output", str(tmp / "r.html")]) == 1
    shown = render(tmp / "r.html", tmp)
    assert shown.console == []
    assert shown.screenshot.startswith(PNG) and len(shown.screenshot) > 10_000  # not an empty page
    assert "<svg" in shown.dom and "Upgrade readiness for GitLab" in shown.dom
    return parse(shown.dom), json.loads((tmp / "r.json").read_text())


@pytest.mark.slow
def test_the_checkout_report_in_chromium(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    page, data = opened(["scan", "samples", "--target", "18.0"], tmp_path)
    s = data["summary"]
    files = sorted({f["path"] for f in data["findings"]})
    assert (page.cards["units"], page.cards["findings"], page.cards["error"], page.cards["warning"],
            page.cards["info"]) == (len(files), s["findings"], s["by_severity"]["error"],
                                    s["by_severity"]["warning"], s["by_severity"]["info"])
    assert {name: counts for (_, name), counts in page.rows.items()} == {
        path: {k: [f["severity"] for f in data["findings"] if f["path"] == path].count(k)
               for k in ("error", "warning", "info")} | {"problems": 0} for path in files}


@pytest.mark.slow
def test_the_instance_report_in_chromium(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SUNSET_GITLAB_TOKEN", TOKEN)
    with StandIn(acme()) as url:
        page, data = opened(["scan", "--gitlab", url, "--group", "acme", "--target", "18.0",
                             "--cache-dir", str(tmp_path / "cache")], tmp_path)
    s = data["summary"]
    assert page.cards == {
        "units": len(data["projects"]), "breaking": 3, "findings": s["findings"],
        "error": s["by_severity"]["error"], "warning": s["by_severity"]["warning"],
        "info": s["by_severity"]["info"], "files": s["files_scanned"], "input-errors": s["errors"]}
    problems = {p["project"]: sum(1 for e in data["errors"] if e["path"].partition("@")[0] == p["project"])
                for p in data["projects"]}
    assert {name: counts for (kind, name), counts in page.rows.items() if kind == "data-unit"} == {
        p["project"]: p["findings"] | {"problems": problems[p["project"]]} for p in data["projects"]}
    assert {name: counts for (kind, name), counts in page.rows.items() if kind == "data-file"} == {
        "acme/platform/ci-templates@main:build.yml": {"projects": 2, "findings": 1}}


def test_the_console_check_sees_errors_and_blocked_fetches(tmp_path: Path) -> None:
    page = tmp_path / "bad.html"
    page.write_text("<!DOCTYPE html><html><head><meta http-equiv=\"Content-Security-Policy\" "
                    "content=\"default-src 'none'; script-src 'unsafe-inline'\"><title>t</title></head><body>"
                    "<img src=\"http://127.0.0.1:9/x.png\"><script>console.error('broken')</script></body></html>")
    shown = render(page, tmp_path)
    assert len(shown.console) == 2
    assert shown.console[0].startswith("\"Loading the image 'http://127.0.0.1:9/x.png' violates the following "
                                       "Content Security Policy directive")
    assert shown.console[1].startswith('"broken", source: file://')


MEASURE = """<script>
const out = [];
let measured = 0;
for (const svg of document.querySelectorAll("svg")) {
  const width = svg.viewBox.baseVal.width, height = svg.viewBox.baseVal.height;
  for (const t of svg.querySelectorAll("text")) {
    const b = t.getBBox();
    measured += 1;
    if (b.x < 0 || b.y < 0 || b.x + b.width > width || b.y + b.height > height) out.push(t.textContent);
  }
}
document.body.insertAdjacentHTML("beforeend", `<pre id="measured">${measured}</pre><pre id="clipped">${
  JSON.stringify(out).replace(/</g, "\\\\u003c")}</pre>`);
</script>"""


def clipped_labels(page: Path, tmp: Path) -> tuple[int, list[str]]:
    """The SVG labels Chromium lays out outside their chart, measured by a script put into a copy of the
    page (the report itself has no script and forbids one)."""
    html = page.read_text(encoding="utf-8")
    html = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", html)
    copy = tmp / "measure.html"
    copy.write_text(html.replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    dom = render(copy, tmp / "m").dom.rpartition("</script>")[2]  # what the script wrote, not its own text
    measured = int(re.search(r'<pre id="measured">(\d+)</pre>', dom).group(1))  # type: ignore[union-attr]
    found = re.search(r'<pre id="clipped">(.*?)</pre>', dom, re.S)
    assert found is not None
    return measured, json.loads(html_unescape(found.group(1)))


@pytest.mark.slow
def test_links_csp_and_no_clipped_label_in_chromium(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SUNSET_GITLAB_TOKEN", TOKEN)
    with StandIn(acme()) as url:
        assert main(["scan", "--gitlab", url, "--group", "acme", "--target", "18.0", "--cache-dir",
                     str(tmp_path / "cache"), "--format", "html", "--output", str(tmp_path / "r.html")]) == 1
    shown = render(tmp_path / "r.html", tmp_path)
    assert shown.console == []
    links = re.findall(r'<a href="([^"]*)"', shown.dom)
    assert links and [u for u in links if not documentation(html_unescape(u))] == []
    assert "<script" not in shown.dom
    assert ('<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'; '
            'img-src data:">') in shown.dom
    measured, clipped = clipped_labels(tmp_path / "r.html", tmp_path)
    assert (clipped, measured) == ([], shown.dom.count("<text "))  # every label measured, none outside
    assert "acme/platform/ci-templates@main:build.yml" in shown.dom  # the long label of the blast radius


def test_the_label_check_sees_a_clipped_label(tmp_path: Path) -> None:
    page = tmp_path / "clipped.html"
    page.write_text('<!DOCTYPE html><html><head><title>t</title></head><body><svg width="300" height="40" '
                    'viewBox="0 0 300 40" xmlns="http://www.w3.org/2000/svg"><text x="254" y="17" text-anchor="end" '
                    'font-size="12">acme/platform/ci-templates@main:build.yml and more</text><text x="0" y="30" '
                    'font-size="12">fits</text></svg></body></html>', encoding="utf-8")
    assert clipped_labels(page, tmp_path) == (2, ["acme/platform/ci-templates@main:build.yml and more"])
