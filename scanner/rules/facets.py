"""The facets of one document: what matcher kinds read, each computed on first use and shared by every
kind that reads it.

A document kind (`scanner.rules.documents`) names the facets it carries. Most are read straight from
the document: `tree` (its data), `text`, and a CI file's `ci-includes`, `ci-variables` and `ci-jobs`
(`scanner.readers.ci`, memoised on the document). `settings-tree` is the tree of a settings file:
no kind reads it under that name, the settings matchers apply to it by default. These are computed:

* `scripts`: the script items worth reading — holding a word some script matcher looks for
  (`Matcher.script_words`) — and their commands grouped by the job that runs them;
* `script-calls`: the API calls those commands make, in a file that names GitLab's API;
* `settings-env`: the variables a settings file sets;
* `settings-commands`: what a Dockerfile, compose file or Kubernetes manifest runs (read by `command`
  with the programs it looks for);
* `rest-calls`, `graphql-documents`, `terraform-resources`: the calls a source file's reader extracts.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from functools import cached_property
from typing import TYPE_CHECKING

from scanner.core.document import Document
from scanner.core.lines import lf_line_ends
from scanner.core.results import Route
from scanner.readers import ci
from scanner.readers.api.model import GraphqlText, RestCall
from scanner.readers.api.paths import API_BASE_ENV
from scanner.readers.shell import DEFINES_FUNCTION, ScriptText, Token, map_lines, read_all, script_file

if TYPE_CHECKING:
    from scanner.readers.settings.views import EnvVar

Use = RestCall | GraphqlText
Job = list[tuple[list[Token], ci.ScriptItem]]  # a job's commands, each with the script item holding it
Items = list[tuple[ci.ScriptItem, ScriptText]]
# A document kind's script items that hold a match of the prefilter (`scanner.rules.documents`).
ScriptsOf = Callable[[Document, re.Pattern[str]], Items]
CallsOf = Callable[[str], Sequence[Use]]  # a source file's text → the calls its reader extracts

# A shell call is only recognised as GitLab's API through one of these words in the same file, or
# one of the names of `API_BASE_ENV` as a whole word. Each word is looked for with `in` (a scan of
# the text in C); a regular expression of all of them would be tried at every position.
_API_WORDS = ("api/v4", "CI_API_V4_URL", "api/graphql", "CI_API_GRAPHQL_URL", "glab", "/tags/reference/")
_API_BASE_NAMES = re.compile(r"\b(?:" + "|".join(map(re.escape, API_BASE_ENV)) + r")\b")
_BASE_PREFIX = os.path.commonprefix(API_BASE_ENV)


def api_possible(doc: Document) -> bool:
    text = doc.text
    return any(word in text for word in _API_WORDS) or (
        _BASE_PREFIX in text and _API_BASE_NAMES.search(text) is not None)


def ci_scripts(doc: Document, prefilter: re.Pattern[str]) -> Items:
    """A CI file's script items, each at the position of its own lines. A job that defines a shell
    function in an item worth reading may call it in any other: all its items are read."""
    every = list(ci.scripts(doc))
    kept = [prefilter.search(item.text) is not None for item in every]
    defining = {item.job for item, keep in zip(every, kept, strict=True) if keep and DEFINES_FUNCTION.search(item.text)}
    return [(item, map_lines(item.text, doc.span(item.route, "value"), doc.lines))
            for item, keep in zip(every, kept, strict=True) if keep or item.job in defining]


def shell_script(doc: Document, prefilter: re.Pattern[str]) -> Items:
    """A shell script file: one script, its lines at their own positions."""
    if not prefilter.search(doc.text):
        return []
    script = script_file(doc.text)
    return [(ci.ScriptItem(script.text, (0,), (0,)), script)]


def graphql_file(text: str) -> list[Use]:
    """A `.graphql` file is one GraphQL document (its syntax was checked when it was parsed)."""
    return [GraphqlText(text)]


class Scripts:
    """The script items of a document worth reading, and their commands by job."""

    def __init__(self, items: Items) -> None:
        self.items = items
        self.texts: dict[Route, ScriptText] = {item.route: script for item, script in items}

    @cached_property
    def per_job(self) -> dict[Route, Job]:
        """One shell runs a job's items in order: a function defined in one is called in the next."""
        grouped: dict[Route, Items] = defaultdict(list)
        for item, script in self.items:
            grouped[item.job].append((item, script))
        found: dict[Route, Job] = defaultdict(list)
        for job, items in grouped.items():
            for (item, _), read in zip(items, read_all([script for _, script in items]), strict=True):
                found[job].extend((words, item) for words in read)
        return found


class Facets:
    """One document's facets, computed when a matcher kind first reads them."""

    def __init__(self, doc: Document, scripts_of: ScriptsOf | None, calls_of: CallsOf | None,
                 script_filter: Callable[[Document], re.Pattern[str] | None]) -> None:
        self.doc = doc
        self._scripts_of = scripts_of
        self._calls_of = calls_of
        self._script_filter = script_filter

    @cached_property
    def scripts(self) -> Scripts:
        prefilter = self._script_filter(self.doc)
        if prefilter is None or self._scripts_of is None:
            return Scripts([])
        return Scripts(self._scripts_of(self.doc, prefilter))

    @cached_property
    def script_calls(self) -> list[tuple[Route, Use]]:
        if not api_possible(self.doc):
            return []
        from scanner.readers.api.shell.flow import job_uses  # only where a script can call the API

        scripts = self.scripts
        return [found for cmds in scripts.per_job.values() for found in job_uses(self.doc, cmds, scripts.texts)]

    @cached_property
    def calls(self) -> list[tuple[Route, Use]]:
        """A source file's calls; their findings are at the document's root with an exact span."""
        if self._calls_of is None:
            return []
        return [((0,), use) for use in self._calls_of(lf_line_ends(self.doc.text))]  # a lone CR ends a line

    @cached_property
    def env(self) -> list[EnvVar]:
        from scanner.readers.settings.views import env_vars  # settings files only

        return list(env_vars(self.doc))
