"""`command`: a program run with a removed flag or subcommand (`gitlab-runner register
--registration-token …`), and the environment variables that stand for its flags. A policy naming
a subcommand and neither flags nor variables reports the subcommand itself (`gitlab-runner exec`).

Commands come from job scripts, script files and the scripts of Terraform files (grouped by the job
that runs them) and from settings files that run commands (container `args:`, Dockerfile `RUN`).
The program is found as a script runs it: behind wrappers and their options (`sudo -HEu git`), as
the image of `docker run`, by a name a variable holds (`app=gitlab-runner` then `$app register`),
and given to a command that runs its arguments (`with_retry gitlab-runner register`, a function
defined elsewhere; not `echo`). Flags a variable holds (`OPTS+=" --tag-list a"`, set before the
command that expands it: `register${OPTS:+ $OPTS}`) are reported where they are written.

A variable named in `env:`
counts next to a use of the program in the same job, or — in a settings file — wherever it is set,
provided the file mentions the program (`gitlab-runner` in its text, `runner` in its path or, for an
env file, its text): `REGISTRATION_TOKEN` in an env file exists only for `gitlab-runner register`.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from scanner.core.document import Document
from scanner.core.results import Route
from scanner.readers import ci
from scanner.readers.shell import Token, program_index, program_name, programs_run, resolve_word, word_chars
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
        names = binaries(cmds)
        ran = programs_in(cmds, names)
        assigned: Assignments | None = None
        for policy, matcher in entries:
            if matcher.programs & ran:
                if assigned is None:
                    assigned = assignments(cmds)
                yield from in_job(doc, policy, matcher, job, cmds, names, assigned)


def command_program(words: list[Token], programs: frozenset[str], names: Mapping[str, str] | None = None,
                    subcommand: str | None = None) -> int | None:
    """Index of the word that runs one of `programs`: the program itself (or a variable `names` says
    holds its name), the image of `docker run [options] IMAGE ...` whose last path segment (without
    tag) is the program, or — for a policy naming a subcommand — the program given to a command that
    runs its arguments (`with_retry gitlab-runner register …`, the wrapper defined elsewhere)."""
    found = [i for name, i in programs_run(words, names).items() if name in programs]
    if found:
        return min(found)
    at = program_index(words)
    if subcommand is not None and at is not None and at + 2 < len(words) and \
            program_name(words[at].text) not in _NOT_RUNNING and \
            program_name(resolve_word(words[at + 1].text, names)) in programs and \
            _is_subcommand(words[at + 2].text, subcommand):
        return at + 1
    return None


# Commands that print or look up their arguments rather than run them (`echo gitlab-runner register`).
_NOT_RUNNING = frozenset({"echo", "printf", "logger", "grep", "egrep", "fgrep", "rg", "which", "type", "whereis",
                          "man", "info", "apropos", "whatis", "hash", "alias", "complete"})


def binaries(cmds: Job) -> dict[str, str]:
    """The variables a job sets to one plain word (`app=gitlab-runner`, `export BIN=/usr/bin/x`): a
    command run as `$app` runs that program. A variable set to two values is not followed."""
    seen: dict[str, str | None] = {}
    for words_, _ in cmds:
        at = program_index(words_)
        for w in words_[: len(words_) if at is None else at]:
            m = _ASSIGNMENT.fullmatch(w.text)
            if m and not m.group(2):
                name, value = m.group(1), m.group(3)
                same = seen.get(name, value) == value
                seen[name] = value if same and _PLAIN_WORD.fullmatch(value) else None
    return {name: value for name, value in seen.items() if value is not None}


def programs_in(cmds: Job, names: Mapping[str, str] | None = None) -> frozenset[str]:
    """The programs a job's commands may run (and the word after each program, which a wrapper may
    run): a policy naming none of them has nothing to find there."""
    found: set[str] = set()
    for words_, _ in cmds:
        found.update(programs_run(words_, names))
        at = program_index(words_)
        if at is not None and at + 1 < len(words_):
            found.add(program_name(resolve_word(words_[at + 1].text, names)))
    return frozenset(found)


def in_job(doc: Document, policy: Policy, m: CommandMatcher, job: Route, cmds: Job,
           names: Mapping[str, str] | None = None, assigned: Assignments | None = None) -> Iterator[Hit]:
    used = False
    for n, (words_, item) in enumerate(cmds):
        at = command_program(words_, m.programs, names, m.subcommand)
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
        if m.flags and assigned:
            yield from _flags_in_variables(policy, m, rest, n, assigned)
        for k, w in enumerate(words_[:at]):
            yield from _env_hit(policy, m, w, item.route)
            if k and words_[k - 1].text in ("-e", "--env") and w.text in m.env and m.value is None:
                yield Hit(policy, item.route, "value", w.text, w.span)  # `docker run -e NAME IMAGE`: from the host
    if used and m.env:
        yield from _env_elsewhere(doc, policy, m, job, cmds)


_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\+?)=(.*)", re.S)
_PLAIN_WORD = re.compile(r"[^\s$`'\"\\]+")
_REFERENCE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")
_PIECE = re.compile(r"\S+")


# A variable's assignments in a job, in order: (index of the command, the `NAME=…` word, the script
# item holding it, whether it appends with `+=`); with the indexes alone, for bisection.
Assignments = dict[str, tuple[list[int], list[tuple[Token, ci.ScriptItem, bool]]]]
_MAX_APPENDS = 16  # `+=` assignments followed back from a command, at most


def assignments(cmds: Job) -> Assignments:
    """Every `NAME=value` and `NAME+=value` of a job's commands (alone, or before the program)."""
    found: Assignments = {}
    for n, (words_, item) in enumerate(cmds):
        at = program_index(words_)
        for w in words_[: len(words_) if at is None else at + 1]:
            a = _ASSIGNMENT.fullmatch(w.text)
            if a is not None:
                indexes, entries = found.setdefault(a.group(1), ([], []))
                indexes.append(n)
                entries.append((w, item, bool(a.group(2))))
    return found


def _flags_in_variables(policy: Policy, m: CommandMatcher, rest: list[Token], n: int,
                        assigned: Assignments) -> Iterator[Hit]:
    """Flags a variable holds when command `n` expands it: `OPTS+=" --tag-list $T"` then
    `gitlab-runner register $OPTS` (or `register${OPTS:+ $OPTS}`); each where it is written. The value
    is the last `NAME=` before the command and the `NAME+=` after it."""
    for name in {name for w in rest for name in _REFERENCE.findall(w.text)}:
        if name not in assigned:
            continue
        indexes, entries = assigned[name]
        last = bisect_left(indexes, n)
        for w, item, appends in reversed(entries[max(0, last - _MAX_APPENDS) : last]):
            yield from _flags_in_value(policy, m, w, item)
            if not appends:
                break


def _flags_in_value(policy: Policy, m: CommandMatcher, w: Token, item: ci.ScriptItem) -> Iterator[Hit]:
    value, positions = word_chars(w)
    skip = value.find("=") + 1
    pieces = [(p.group(), p.start()) for p in _PIECE.finditer(value, skip)]
    for k, (piece, start) in enumerate(pieces):
        flag = piece.split("=", 1)[0]
        following = [Token(pieces[k + 1][0], 0, 0, 0)] if k + 1 < len(pieces) else []
        if flag in m.flags and start < len(positions) and _flag_value_ok(m, Token(piece, 0, 0, 0), following):
            line, column = positions[start]
            yield Hit(policy, item.route, "value", flag, (line, column, line, column + len(flag)))


def _is_subcommand(word: str, subcommand: str | None) -> bool:
    """`word` names the subcommand: exactly, with Rake's arguments (`import:github[token,42]`), or,
    for a subcommand ending in `*`, any word it begins (`geo:db:*`)."""
    if subcommand is None:
        return False
    if subcommand.endswith("*"):
        return word.startswith(subcommand[:-1]) and len(word) > len(subcommand) - 1
    return word == subcommand or word.startswith(subcommand + "[") or \
        word.startswith(subcommand) and _SPLIT_AFTER.fullmatch(word, len(subcommand)) is not None


# `register${EXTRA:+ $EXTRA}`: the expansion is empty or starts with a blank, so the subcommand is a word.
_SPLIT_AFTER = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*:?\+[ \t][^}]*\}")


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
