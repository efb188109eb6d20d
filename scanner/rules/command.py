"""`command`: a program run with a removed flag or subcommand (`gitlab-runner register
--registration-token …`), and the environment variables that stand for its flags. A policy naming
a subcommand and neither flags nor variables reports the subcommand itself (`gitlab-runner exec`).

Commands come from job scripts and script files (grouped by the job that runs them) and from
settings files that run commands (container `args:`, Dockerfile `RUN`). A variable named in `env:`
counts next to a use of the program in the same job, or — in a settings file — wherever it is set,
provided the file mentions the program (`gitlab-runner` in its text, `runner` in its path or, for an
env file, its text): `REGISTRATION_TOKEN` in an env file exists only for `gitlab-runner register`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from scanner.core.document import Document
from scanner.core.results import Route
from scanner.readers import ci
from scanner.readers.shell import Token, programs_run
from scanner.rules import spec
from scanner.rules.hits import Hit
from scanner.rules.kind import MatcherKind
from scanner.rules.policy import Policy

if TYPE_CHECKING:
    from scanner.rules.facets import Facets, Job


class Spec(spec.Spec):
    programs: tuple[str, ...] = spec.field(min_length=1)
    subcommand: str | None = None  # also with Rake's `[args]`; a trailing `*` matches any word it begins
    flags: tuple[str, ...] = ()
    env: tuple[str, ...] = ()
    value: spec.ValueSpec | None = None  # only flag and variable values that pass (`--shell cmd`)


@dataclass(frozen=True, slots=True)
class CommandMatcher(spec.Matcher):
    kind: ClassVar[str] = "command"
    programs: frozenset[str]
    subcommand: str | None
    flags: frozenset[str]
    env: frozenset[str]
    value: spec.ValueTest | None = None

    def script_words(self) -> Iterable[str]:
        return self.programs | self.env  # `export NAME=...` in a script item of its own


def compile(s: Spec, build: spec.Build) -> CommandMatcher:
    programs, flags, env = frozenset(s.programs), frozenset(s.flags), frozenset(s.env)
    return CommandMatcher(programs, s.subcommand, flags, env, spec.value_test(s.value))


Entries = list[tuple[Policy, CommandMatcher]]


def in_scripts(entries: Entries, facets: Facets) -> Iterator[Hit]:
    """Commands in job scripts and script files, grouped by the job running them."""
    return in_jobs(entries, facets.doc, facets.scripts.per_job)


def in_settings_commands(entries: Entries, facets: Facets) -> Iterator[Hit]:
    """What a Dockerfile, compose file or Kubernetes manifest runs, grouped by the container running it."""
    from scanner.readers.settings.views import command_lines  # settings files only

    programs = frozenset(p for _, m in entries for p in m.programs)
    return in_jobs(entries, facets.doc, command_lines(facets.doc, programs))


def in_jobs(entries: Entries, doc: Document, per_job: dict[Route, Job]) -> Iterator[Hit]:
    """Command policies over commands split into words, grouped by the job or container running them."""
    for job, cmds in per_job.items():
        ran = programs_in(cmds)
        for policy, matcher in entries:
            if matcher.programs & ran:
                yield from in_job(doc, policy, matcher, job, cmds)


def command_program(words: list[Token], programs: frozenset[str]) -> int | None:
    """Index of the word that runs one of `programs`: the program itself, or the image of
    `docker run [options] IMAGE ...` whose last path segment (without tag) is the program."""
    found = [i for name, i in programs_run(words).items() if name in programs]
    return min(found) if found else None


def programs_in(cmds: Job) -> frozenset[str]:
    """The programs a job's commands may run: a policy naming none of them has nothing to find there."""
    return frozenset(name for words_, _ in cmds for name in programs_run(words_))


def in_job(doc: Document, policy: Policy, m: CommandMatcher, job: Route, cmds: Job) -> Iterator[Hit]:
    used = False
    for words_, item in cmds:
        at = command_program(words_, m.programs)
        if at is None:
            continue
        rest = words_[at + 1 :]
        sub = next((w for w in rest[:3] if _is_subcommand(w.text, m.subcommand)), None)
        if m.subcommand is not None and sub is None:
            continue
        used = True
        if sub is not None and not m.flags and not m.env:  # the subcommand itself is what goes
            yield Hit(policy, item.route, "value", sub.text.split("[", 1)[0], sub.span)  # not Rake's arguments (tokens)
        for k, w in enumerate(rest):
            flag = w.text.split("=", 1)[0]
            if flag in m.flags and _flag_value_ok(m, w, rest[k + 1 : k + 2]):
                yield Hit(policy, item.route, "value", flag, w.span)
        for w in words_[:at]:
            yield from _env_hit(policy, m, w, item.route)
            if w.text in ("-e", "--env"):
                continue  # `docker run -e NAME=value IMAGE register`: the next word is checked
    if used and m.env:
        yield from _env_elsewhere(doc, policy, m, job, cmds)


def _is_subcommand(word: str, subcommand: str | None) -> bool:
    """`word` names the subcommand: exactly, with Rake's arguments (`import:github[token,42]`), or,
    for a subcommand ending in `*`, any word it begins (`geo:db:*`)."""
    if subcommand is None:
        return False
    if subcommand.endswith("*"):
        return word.startswith(subcommand[:-1]) and len(word) > len(subcommand) - 1
    return word == subcommand or word.startswith(subcommand + "[")


def _env_elsewhere(doc: Document, policy: Policy, m: CommandMatcher, job: Route, cmds: Job) -> Iterator[Hit]:
    for words_, item in cmds:  # `export NAME=...` elsewhere in the same job
        if words_ and words_[0].text == "export":
            for w in words_[1:]:
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


# `gitlab-runner register` reads these from its environment: a file setting two of them configures
# a runner image or container whatever it is built FROM (a Windows `servercore` image, say).
_RUNNER_ENV = frozenset({"CI_SERVER_URL", "REGISTRATION_TOKEN", "RUNNER_TOKEN", "RUNNER_EXECUTOR", "RUNNER_NAME",
                         "RUNNER_SHELL", "RUNNER_TAG_LIST", "REGISTER_NON_INTERACTIVE", "REGISTER_LOCKED"})


def in_settings_env(entries: Entries, facets: Facets) -> Iterator[Hit]:
    """A settings file's variables named in a matcher's `env:`, where the file mentions the program
    or, for `gitlab-runner`, sets the variables its `register` reads."""
    doc, env = facets.doc, facets.env
    runner_env = len({var.name for var in env} & _RUNNER_ENV) >= 2
    mentioned: dict[int, bool] = {}
    for var in env:
        for policy, m in entries:
            if var.name not in m.env or (m.value is not None and not m.value.accepts(var.value)):
                continue
            if mentioned.setdefault(id(m), _mentions(doc, m) or (runner_env and "gitlab-runner" in m.programs)):
                yield Hit(policy, var.route, var.part, var.name, var.span)


def _mentions(doc: Document, m: CommandMatcher) -> bool:
    path = doc.path.lower()
    settings = "\n".join(line for line in doc.lines if not line.lstrip().startswith("#")).lower()
    for program in m.programs:
        short = program.rsplit("-", 1)[-1].lower()
        if program in settings or short in path or (doc.kind == "env-file" and short in settings):
            return True
    return False


KIND = MatcherKind(Spec, CommandMatcher, compile, {"scripts": in_scripts, "settings-env": in_settings_env,
                                                   "settings-commands": in_settings_commands})
