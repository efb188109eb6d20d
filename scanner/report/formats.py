"""The output formats: one table from `--format` name to renderer.

Every format module in `scanner.report` exposes `render(report: Report, options: RenderOptions) -> str`.
`FORMATS` is the only place a format is registered; the CLI's `--format` choices come from it. Its
entries import their module when they first render, and every one renders the report through the
redactor (`scanner.core.redact.redact_report`): no format sees a secret, so none can print one. Every
format a person reads also gets control and bidi characters as escapes (`visible_report`; the text
format escapes its lines itself, around its carets; SARIF keeps its snippets as data, JSON all).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from scanner.core.redact import redact_report, visible_report
from scanner.report.options import RenderOptions

if TYPE_CHECKING:
    from scanner.core.results import Report


Renderer = Callable[["Report", RenderOptions], str]


# Each format's module is imported when it first renders (inside these functions, where type
# checkers and editors follow it), so loading this table at start-up loads no formatter.
def _text(report: Report, options: RenderOptions) -> str:
    from scanner.report import text

    return text.render(redact_report(report), options)


def _concise(report: Report, options: RenderOptions) -> str:
    from scanner.report import concise

    return concise.render(visible_report(redact_report(report)), options)


def statistics(report: Report, options: RenderOptions) -> str:
    """`--statistics` (not a `--format`: it replaces the report on stdout)."""
    from scanner.report import statistics as table

    return table.render(redact_report(report), options)


def _json(report: Report, options: RenderOptions) -> str:
    from scanner.report import jsonfmt

    return jsonfmt.render(redact_report(report), options)


def _sarif(report: Report, options: RenderOptions) -> str:
    from scanner.report import sarif

    return sarif.render(visible_report(redact_report(report), snippets=False), options)


def _codequality(report: Report, options: RenderOptions) -> str:
    from scanner.report import codequality

    return codequality.render(visible_report(redact_report(report)), options)


def _markdown(report: Report, options: RenderOptions) -> str:
    from scanner.report import markdown

    return markdown.render(visible_report(redact_report(report)), options)


def _html(report: Report, options: RenderOptions) -> str:
    from scanner.report import html

    return html.render(visible_report(redact_report(report)), options)


# In the order `sunset scan --help` lists them.
FORMATS: dict[str, Renderer] = {
    "text": _text,
    "concise": _concise,
    "json": _json,
    "sarif": _sarif,
    "codequality": _codequality,
    "markdown": _markdown,
    "html": _html,
}
