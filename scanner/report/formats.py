"""The output formats: one options record, one table from `--format` name to renderer.

Every format module in `scanner.report` exposes `render(report: Report, options: RenderOptions) -> str`.
`FORMATS` is the only place a format is registered; the CLI's `--format` choices come from it. Its
entries import their module when they first render, so loading this table (at CLI start-up) loads
none of the formatters.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scanner.core.results import Report
    from scanner.rules.policy import Policy


@dataclass(frozen=True, slots=True)
class RenderOptions:
    """What a format may need besides the report; each format reads only its own fields."""

    policies: Sequence[Policy] = ()  # sarif: the rules' help text comes from the policies
    color: bool = False  # text: ANSI colours
    env: Mapping[str, str] = field(default_factory=dict)  # markdown: GitLab CI variables for file links


Renderer = Callable[["Report", RenderOptions], str]


def _lazy(module: str) -> Renderer:
    """`scanner.report.<module>.render`, imported on the first call."""

    def render(report: Report, options: RenderOptions) -> str:
        # `__import__`, not `importlib.import_module`: `python -X importtime` only reports the former.
        renderer: Renderer = __import__(f"scanner.report.{module}", fromlist=["render"]).render
        return renderer(report, options)

    return render


# In the order `sunset scan --help` lists them.
FORMATS: dict[str, Renderer] = {
    "text": _lazy("text"),
    "json": _lazy("jsonfmt"),
    "sarif": _lazy("sarif"),
    "codequality": _lazy("codequality"),
    "markdown": _lazy("markdown"),
}
