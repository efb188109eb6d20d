"""Each kind of document evaluated over the facets it carries, by the matcher kinds that read them.

The order of the steps is fixed (a location reached by two matchers of one policy is reported
once, with what the first one matched): CI files read includes, variable blocks, the tree and
the scripts; script files their one script; settings files their tree, settings checks, the
variables they set and the commands they run; source files the API calls their reader extracts.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from scanner.core.document import Document
from scanner.core.results import Route
from scanner.core.tree import Span
from scanner.readers import ci
from scanner.readers.shell import ScriptText, commands, map_lines
from scanner.rules import (
    ci_variable,
    command,
    graphql,
    implicit_default,
    job_token_reach,
    jsonpath,
    required_keys,
    rest_api,
    secret_file,
    template_include,
    template_unknown,
    text,
    unique_values,
    variable_reference,
)
from scanner.rules.hits import Hit
from scanner.rules.index import PolicyIndex, api_possible
from scanner.rules.policy import Policy

if TYPE_CHECKING:
    from scanner.readers.api.model import GraphqlText, RestCall

_RUNS_COMMANDS = ("dockerfile", "compose", "k8s-manifest")


def evaluate_ci(index: PolicyIndex, doc: Document) -> Iterator[Hit]:
    yield from template_include.evaluate(index.templates, doc)
    yield from template_unknown.evaluate([policy for policy, _ in index.of("template-unknown")], index.templates, doc)
    yield from ci_variable.evaluate_ci(index.variables, doc)
    yield from variable_reference.in_variable_values(index.references, doc)
    yield from variable_reference.in_keyword_values(index.references, doc)
    yield from jsonpath.evaluate(index.jsonpaths, doc)
    yield from required_keys.evaluate(index.of("required-keys"), doc)
    yield from _ci_scripts(index, doc)
    reach = [policy for policy, _ in index.of("job-token-reach")]
    if reach:
        yield from job_token_reach.in_needs(reach, doc)
    yield from text.evaluate(index.of("text"), doc)


def _ci_scripts(index: PolicyIndex, doc: Document) -> Iterator[Hit]:
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
    yield from text.evaluate(index.of("text"), doc)
    prefilter = index.script_filter(doc)
    if prefilter is None or not prefilter.search(doc.text):
        return
    script = ScriptText(doc.text, tuple((n, 1) for n in range(1, doc.text.count("\n") + 2)))
    yield from script_hits(index, doc, [(ci.ScriptItem(doc.text, (0,), (0,)), script)])


def script_hits(index: PolicyIndex, doc: Document, items: Iterable[tuple[ci.ScriptItem, ScriptText]]) -> Iterator[Hit]:
    """References, commands, job-token reach and API calls in scripts; commands grouped by the job running them."""
    per_job: dict[Route, command.Job] = defaultdict(list)
    texts: dict[Route, ScriptText] = {}
    for item, script in items:
        texts[item.route] = script
        yield from variable_reference.in_script(index.references, script, item.route, shell=True)
        for words in commands(script):
            per_job[item.job].append((words, item))
    reach = [policy for policy, _ in index.of("job-token-reach")]
    for job, cmds in per_job.items():
        ran = command.programs_in(cmds)
        for policy, matcher in index.of("command"):
            if matcher.programs & ran:
                yield from command.in_job(doc, policy, matcher, job, cmds)
        for policy in reach:
            for words, item in cmds:
                yield from job_token_reach.in_command(doc, policy, words, item.route)
        if index.api and api_possible(doc):
            from scanner.readers.api.shell.flow import job_uses  # only where a script can call the API

            for route, use in job_uses(doc, cmds, texts):
                for policy, matched, span in api_hits(index, use):
                    yield Hit(policy, route, "value", matched, span)


def api_hits(
    index: PolicyIndex, use: RestCall | GraphqlText, strict: bool = False
) -> Iterator[tuple[Policy, str, Span]]:
    from scanner.readers.api.model import RestCall  # only where calls were extracted

    if isinstance(use, RestCall):
        yield from rest_api.evaluate(index.of("rest-api"), use)
    elif index.of("graphql"):
        yield from graphql.evaluate(index.of("graphql"), use, strict)


def evaluate_settings(index: PolicyIndex, doc: Document) -> Iterator[Hit]:
    from scanner.readers.settings.views import command_lines, env_vars  # settings files only

    yield from jsonpath.evaluate(index.jsonpaths, doc)
    yield from implicit_default.evaluate(index.of("implicit-default"), doc)
    yield from required_keys.evaluate(index.of("required-keys"), doc)
    yield from secret_file.evaluate(index.of("secret-file"), doc)
    yield from unique_values.evaluate(index.of("unique-values"), doc)
    commands_ = index.of("command")
    if index.variables or commands_:
        env = list(env_vars(doc))
        yield from ci_variable.evaluate_env(index.variables, env)
        yield from command.in_settings_env(commands_, doc, env)
    if commands_ and doc.kind in _RUNS_COMMANDS:
        programs = frozenset(p for _, m in commands_ for p in m.programs)
        yield from command.in_jobs(commands_, doc, command_lines(doc, programs))


def evaluate_text(index: PolicyIndex, doc: Document) -> Iterator[Hit]:
    """Source files: the `text` policies over the file's text (the API calls are `evaluate_calls`)."""
    return text.evaluate(index.of("text"), doc)


def evaluate_calls(index: PolicyIndex, uses: Iterable[RestCall | GraphqlText], strict: bool = False) -> Iterator[Hit]:
    """Source files (Python, JavaScript, Ruby, Terraform, GraphQL): the calls their reader extracted."""
    for use in uses:
        for policy, matched, span in api_hits(index, use, strict):
            yield Hit(policy, (0,), "value", matched, span)
