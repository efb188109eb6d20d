"""`job-token-reach`: every other project a job reaches with its CI job token (GitLab 18.0 enforces
their inbound allowlists), so each can allowlist this project before the upgrade.

Script commands that clone with `gitlab-ci-token:$CI_JOB_TOKEN` or call the REST API with the job
token, and `needs: [{project: ...}]`. A multi-project `trigger:` is not one: GitLab creates the
downstream pipeline with the triggering user's permissions, not through the job token allowlist.
The matcher has no parameters; the logic is fixed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar
from urllib.parse import unquote

from scanner.core.document import Document
from scanner.core.results import Route
from scanner.readers import ci
from scanner.readers.shell import Token
from scanner.rules import spec
from scanner.rules.hits import Hit
from scanner.rules.kind import Entries, MatcherKind, Peers
from scanner.rules.policy import Policy

if TYPE_CHECKING:
    from scanner.rules.facets import Facets


@dataclass(frozen=True, slots=True)
class JobTokenReachMatcher(spec.Matcher):
    kind: ClassVar[str] = "job-token-reach"

    def script_words(self) -> Iterable[str]:
        return ("CI_JOB_TOKEN", "gitlab-ci-token")


def compile(s: spec.Spec, build: spec.Build) -> JobTokenReachMatcher:
    return JobTokenReachMatcher()


def policies(entries: Entries, peers: Peers) -> tuple[Policy, ...]:
    return tuple(policy for policy, _ in entries)


_CLONE = re.compile(r"gitlab-ci-token:\$\{?CI_JOB_TOKEN\}?@[^/\s]+/(?P<p>[^\s?#]+?)(?:\.git)?/?$")
_API = re.compile(r"(?:/api/v4|\$\{?CI_API_V4_URL\}?)/projects/(?P<p>[^/\s?#]+)")
_SAME = re.compile(r"^\$\{?CI_PROJECT_(?:ID|PATH)\}?$")
_TOKEN_USE = re.compile(r"(?:JOB-TOKEN:\s*|job_token=|token=|gitlab-ci-token:)\$\{?CI_JOB_TOKEN")


def in_scripts(policies: tuple[Policy, ...], facets: Facets) -> Iterator[Hit]:
    for cmds in facets.scripts.per_job.values():
        for policy in policies:
            for words, item in cmds:
                yield from in_command(facets.doc, policy, words, item.route)


def in_command(doc: Document, policy: Policy, words: list[Token], route: Route) -> Iterator[Hit]:
    if not any(_TOKEN_USE.search(w.text) for w in words):
        return
    for w in words:
        m = _API.search(w.text) or _CLONE.search(w.text)  # a registry URL with userinfo names its project id
        if m is None:
            continue
        project = unquote(m.group("p"))
        if _SAME.match(m.group("p")) or _SAME.match(project):
            continue
        quoted = doc.line_text(w.line)[w.column - 1 : w.column] in "'\""
        col = w.column + m.start("p") + (1 if quoted else 0)
        yield Hit(policy, route, "value", project, (w.line, col, w.line, col + len(m.group("p"))))


def in_needs(policies: tuple[Policy, ...], facets: Facets) -> Iterator[Hit]:
    """`needs: [{project: ...}]` downloads artifacts with the job token."""
    for route, body in ci.jobs(facets.doc):
        needs = body.get("needs")
        if isinstance(needs, list):
            for i, need in enumerate(needs):
                project = need.get("project") if isinstance(need, dict) else None
                if isinstance(project, str) and not _SAME.match(project):
                    for policy in policies:
                        yield Hit(policy, route + ("needs", i, "project"), "value", project)


KIND = MatcherKind(spec.Spec, JobTokenReachMatcher, compile, {"scripts": in_scripts, "ci-jobs": in_needs}, policies)
