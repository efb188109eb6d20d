"""Policy evaluation over one CI document, dispatched through indexes built once per scan.

Each matcher kind is indexed by what makes it cheap to skip: template names, variable
names, the literal keys a JSONPath needs, and one prefilter regex over script text. A
document pays for a policy only when the thing the policy looks for is present.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from typing import Any

from jsonpath_ng.jsonpath import Child, Fields, Index

from scanner.core.document import Document, Part
from scanner.core.results import Route
from scanner.readers import ci
from scanner.readers.shell import ScriptText, Token, command_program, commands, comment_start, map_lines
from scanner.rules.apiindex import API_WORDS, ApiIndex
from scanner.rules.hits import Hit
from scanner.rules.matchers import (
    CiVariableMatcher,
    CommandMatcher,
    GraphqlMatcher,
    JobTokenReachMatcher,
    JsonPathMatcher,
    Matcher,
    RestApiMatcher,
    TemplateIncludeMatcher,
    ValueTest,
    VariableReferenceMatcher,
)
from scanner.rules.policy import Policy
from scanner.rules.reach import script_reach, structural_reach
from scanner.rules.settingkinds import leaves


class PolicyIndex:
    def __init__(self, policies: list[Policy]) -> None:
        self.templates: dict[str, list[Policy]] = defaultdict(list)
        self.variables: dict[str, list[Policy]] = defaultdict(list)
        self.references: list[tuple[Policy, VariableReferenceMatcher]] = []
        self.jsonpaths: list[tuple[Policy, JsonPathMatcher]] = []
        self.commands: list[tuple[Policy, CommandMatcher]] = []
        self.reach: list[Policy] = []
        self.api = ApiIndex()  # REST and GraphQL policies (scanner.readers.api)
        self.settings: list[tuple[Policy, Matcher]] = []  # evaluated by scanner.rules.settingchecks
        words: set[str] = set()
        api_words: set[str] = set()
        for p, m in ((policy, leaf) for policy in policies for leaf in leaves(policy.matcher)):
            if isinstance(m, TemplateIncludeMatcher):
                for name in m.templates:
                    self.templates[name].append(p)
            elif isinstance(m, CiVariableMatcher):
                for name in m.names:
                    self.variables[name].append(p)
            elif isinstance(m, VariableReferenceMatcher):
                self.references.append((p, m))
                words.update(m.names)
            elif isinstance(m, JsonPathMatcher):
                self.jsonpaths.append((p, m))
            elif isinstance(m, CommandMatcher):
                self.commands.append((p, m))
                words.update(m.programs)
                words.update(m.env)  # `export NAME=...` in a script item of its own
            elif isinstance(m, JobTokenReachMatcher):
                self.reach.append(p)
                words.update(("CI_JOB_TOKEN", "gitlab-ci-token"))
            elif isinstance(m, (RestApiMatcher, GraphqlMatcher)):
                self.api.add(p, m)
                api_words.update(API_WORDS)
            else:
                self.settings.append((p, m))
        self.prefilter = _alternation(words)
        # API words (curl, jq, …) are common; they only matter in a document that names GitLab's API
        self.prefilter_api = _alternation(words | api_words)

    def script_filter(self, doc: Document) -> re.Pattern[str] | None:
        """The prefilter for this document's script items: with the API words only where it can call the API."""
        return self.prefilter_api if self.api and api_possible(doc) else self.prefilter


def _alternation(words: set[str]) -> re.Pattern[str] | None:
    alternatives = "|".join(sorted(map(re.escape, words), key=len, reverse=True))
    return re.compile(alternatives) if alternatives else None


_API_ANCHORS = re.compile(r"api/v4|CI_API_V4_URL|api/graphql|CI_API_GRAPHQL_URL|glab")


def api_possible(doc: Document) -> bool:
    """A shell call is only recognised as GitLab's API through one of these words in the same file."""
    return _API_ANCHORS.search(doc.text) is not None


def evaluate_tree(index: PolicyIndex, doc: Document) -> Iterator[Hit]:
    """The generic evaluation for any tree-shaped document: JSONPath policies."""
    yield from _jsonpaths(index, doc)


def evaluate_ci(index: PolicyIndex, doc: Document) -> Iterator[Hit]:
    yield from _templates(index, doc)
    yield from _variables(index, doc)
    yield from _jsonpaths(index, doc)
    yield from _scripts(index, doc)
    if index.reach:
        yield from structural_reach(index.reach, doc)


def _templates(index: PolicyIndex, doc: Document) -> Iterator[Hit]:
    if not index.templates:
        return
    for entry in ci.include_entries(doc):
        if entry.kind == "template":
            for policy in index.templates.get(entry.target, ()):
                yield Hit(policy, entry.route, "value", entry.target)


def _variables(index: PolicyIndex, doc: Document) -> Iterator[Hit]:
    for route, block in ci.variable_blocks(doc):
        for name, value in block.items():
            text = ci.variable_value(value)
            for policy in index.variables.get(name, ()):
                test = variable_test(policy, name)
                if test is None or test.accepts(text):
                    yield Hit(policy, route + (name,), "key", name)
            if index.references and isinstance(text, str) and ("$" in text or "%" in text):
                yield from _references_in_value(index, doc, route + (name,), text, value)


def _references_in_value(index: PolicyIndex, doc: Document, route: Route, text: str, raw: Any) -> Iterator[Hit]:
    scalar_route = route + ("value",) if isinstance(raw, dict) else route
    script = map_lines(text, doc.span(scalar_route, "value"), doc.lines)
    yield from _references(index, script, scalar_route)


def _references(index: PolicyIndex, script: ScriptText, route: Route, shell: bool = False) -> Iterator[Hit]:
    for policy, matcher in index.references:
        for i, (line_text, _) in enumerate(script.lines()):
            code = line_text[: comment_start(line_text)] if shell else line_text
            for m in matcher.pattern.finditer(code):
                line, col = script.position(i, m.start())
                yield Hit(policy, route, "value", m.group(1), (line, col, line, col + len(m.group(0))))


def _jsonpaths(index: PolicyIndex, doc: Document) -> Iterator[Hit]:
    keys = doc.data.keys
    for policy, matcher in index.jsonpaths:
        if not matcher.required_keys <= keys:
            continue
        for n, root in enumerate(doc.data.roots):
            for match in matcher.expression.find(root):
                route = (n,) + _route_of(match.full_path)
                test = matcher.value
                if test is not None and isinstance(match.value, list):
                    # a value test on a list (`extends: [.a, .b]`) is a test on each item
                    for i, item in enumerate(match.value):
                        if test.accepts(item):
                            yield Hit(policy, route + (i,), "value", str(item))
                    continue
                if test is not None and not test.accepts(match.value):
                    continue
                part: Part = "key" if isinstance(route[-1], str) else "value"
                yield Hit(policy, route, part, str(route[-1]))


def _route_of(path: Any) -> tuple[Any, ...]:
    if isinstance(path, Child):
        return _route_of(path.left) + _route_of(path.right)
    if isinstance(path, Fields):
        return tuple(path.fields)
    if isinstance(path, Index):
        return tuple(path.indices[:1])
    return ()


def _scripts(index: PolicyIndex, doc: Document) -> Iterator[Hit]:
    prefilter = index.script_filter(doc)
    if prefilter is None:
        return
    items = [
        (item, map_lines(item.text, doc.span(item.route, "value"), doc.lines))
        for item in ci.scripts(doc)
        if prefilter.search(item.text)
    ]
    yield from script_hits(index, doc, items)


def evaluate_shell(index: PolicyIndex, doc: Document) -> Iterator[Hit]:
    """A shell script file: one script, its lines at their own positions."""
    prefilter = index.script_filter(doc)
    if prefilter is None or not prefilter.search(doc.text):
        return
    script = ScriptText(doc.text, tuple((n, 1) for n in range(1, doc.text.count("\n") + 2)))
    yield from script_hits(index, doc, [(ci.ScriptItem(doc.text, (0,), (0,)), script)])


def script_hits(
    index: PolicyIndex, doc: Document, items: Iterable[tuple[ci.ScriptItem, ScriptText]]
) -> Iterator[Hit]:
    """References, commands and job-token reach in scripts; commands grouped by the job running them."""
    per_job: dict[Route, list[tuple[list[Token], ci.ScriptItem]]] = defaultdict(list)
    texts: dict[Route, ScriptText] = {}
    for item, script in items:
        texts[item.route] = script
        yield from _references(index, script, item.route, shell=True)
        for words in commands(script):
            per_job[item.job].append((words, item))
    for job, cmds in per_job.items():
        for policy, matcher in index.commands:
            yield from _command_hits(doc, policy, matcher, job, cmds)
        for policy in index.reach:
            for words, item in cmds:
                yield from script_reach(doc, policy, words, item.route)
        if index.api and api_possible(doc):
            from scanner.readers.api.shellflow import job_uses  # only where a script can call the API

            for route, use in job_uses(doc, cmds, texts):
                for h in index.api.hits(use):
                    yield Hit(h.policy, route, "value", h.matched, h.span)


def _command_hits(
    doc: Document, policy: Policy, m: CommandMatcher, job: Route, cmds: list[tuple[list[Token], ci.ScriptItem]]
) -> Iterator[Hit]:
    used = False
    for words, item in cmds:
        at = command_program(words, m.programs)
        if at is None:
            continue
        rest = words[at + 1 :]
        if m.subcommand is not None and not any(w.text == m.subcommand for w in rest[:3]):
            continue
        used = True
        for k, w in enumerate(rest):
            flag = w.text.split("=", 1)[0]
            if flag in m.flags and _flag_value_ok(m, w, rest[k + 1 : k + 2]):
                yield Hit(policy, item.route, "value", flag, w.span)
        for w in words[:at]:
            yield from _env_hit(policy, m, w, item.route)
            if w.text in ("-e", "--env"):
                continue  # `docker run -e NAME=value IMAGE register`: the next word is checked
    if not used or not m.env:
        return
    for words, item in cmds:  # `export NAME=...` elsewhere in the same job
        if words and words[0].text == "export":
            for w in words[1:]:
                yield from _env_hit(policy, m, w, item.route)
    for route, block in ci.variable_blocks(doc):
        if route[:2] == job[:2] or len(route) == 2:
            for name in block:
                if name in m.env and (m.value is None or m.value.accepts(ci.variable_value(block[name]))):
                    yield Hit(policy, route + (name,), "key", name)


def _env_hit(policy: Policy, m: CommandMatcher, w: Token, route: Route) -> Iterator[Hit]:
    name, _, value = w.text.partition("=")
    if "=" in w.text and name in m.env and (m.value is None or m.value.accepts(value)):
        yield Hit(policy, route, "value", name, (w.line, w.column, w.line, w.column + len(name)))


def _flag_value_ok(m: CommandMatcher, w: Token, following: list[Token]) -> bool:
    """`--shell cmd` or `--shell=cmd` when the policy names a value; any use of the flag otherwise."""
    if m.value is None:
        return True
    value = w.text.split("=", 1)[1] if "=" in w.text else following[0].text if following else None
    return m.value.accepts(value)


def variable_test(policy: Policy, name: str) -> ValueTest | None:
    """The value test of the policy's `ci-variable` matcher naming `name` (inside `any-of` too)."""
    for m in leaves(policy.matcher):
        if isinstance(m, CiVariableMatcher) and name in m.names:
            return m.value
    return None


def command_hits(
    index: PolicyIndex, doc: Document, per_job: dict[Route, list[tuple[list[Token], ci.ScriptItem]]]
) -> Iterator[Hit]:
    """Command policies over commands already split into words (settings files: container
    `args:`, Dockerfile exec form), grouped by the job or container that runs them."""
    for job, cmds in per_job.items():
        for policy, matcher in index.commands:
            yield from _command_hits(doc, policy, matcher, job, cmds)
