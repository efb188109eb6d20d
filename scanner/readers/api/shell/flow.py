"""The API calls of one job's (or one script file's) commands, and which jq filter reads which call.

A response field read belongs to a call only when the data provably comes from it:
`curl … | jq …`, `X=$(curl …)` then `echo "$X" | jq …` or `jq … <<< "$X"`, and
`curl -o f.json …` (or `> f.json`) then `jq … f.json` / `jq … < f.json` / `cat f.json | jq …`.
Anything else — a jq over some other file, a second jq after the first — reads something else.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from scanner.core.document import Document
from scanner.core.results import Route
from scanner.readers import ci
from scanner.readers.api.model import GraphqlText, Read, RestCall
from scanner.readers.api.shell.clients import CLIENTS, Bases, parse_call, piped, span_in, word_chars
from scanner.readers.api.shell.jq import field_reads
from scanner.readers.shell import ScriptText, Token, program_name

Use = RestCall | GraphqlText
_PREFIX = re.compile(r"^(?:([A-Za-z_][A-Za-z0-9_]*)=)?(\$\(|`)?(.*)$")
_WRAPPERS = frozenset({"export", "local", "readonly", "declare", "sudo", "env", "exec", "time", "nohup",
                       "command", "eval", "then", "do", "else", "if", "while", "until", "!", "{", "("})
_VAR = re.compile(r"^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$")
_JQ_ARG1 = frozenset({"--indent", "-L", "--tab-width"})
_JQ_ARG2 = frozenset({"--arg", "--argjson", "--slurpfile", "--rawfile"})


def _program_at(words: Sequence[Token], program: str) -> int | None:
    """Index of the word running `program`: the command itself, or `$(program` inside it."""
    leading = True
    for i, w in enumerate(words):
        m = _PREFIX.match(w.text)
        assert m is not None
        var, sub, rest = m.groups()
        if program_name(rest) == program and (sub or leading):
            return i
        leading = leading and (w.text in _WRAPPERS or (var is not None and not sub))
    return None


def _client(words: Sequence[Token]) -> tuple[int, str, str | None] | None:
    """(index, program, captured variable) of an HTTP client run by this command, if any."""
    leading = True
    for i, w in enumerate(words):
        m = _PREFIX.match(w.text)
        assert m is not None
        var, sub, rest = m.groups()
        prog = program_name(rest)
        glab_api = prog != "glab" or (i + 1 < len(words) and words[i + 1].text == "api")
        if prog in CLIENTS and (sub or leading) and glab_api:
            return i, prog, var if sub else None
        if leading and (w.text in _WRAPPERS or (var is not None and not sub)):
            continue
        leading = False
    return None


def _bases(doc: Document, cmds: Sequence[tuple[list[Token], ci.ScriptItem]]) -> Bases:
    rest: set[str] = set()
    gql: set[str] = set()

    def consider(name: str, value: object) -> None:
        if isinstance(value, str):
            if "/api/v4" in value or "CI_API_V4_URL" in value:
                rest.add(name)
            if "/api/graphql" in value or "CI_API_GRAPHQL_URL" in value:
                gql.add(name)

    if doc.kind == "gitlab-ci":
        for _, block in ci.variable_blocks(doc):
            for name, value in block.items():
                consider(name, ci.variable_value(value))
    for words, _ in cmds:
        for w in words[:2]:
            name, eq, value = w.text.partition("=")
            if eq and name.isidentifier():
                consider(name, value)
    return Bases(frozenset(rest), frozenset(gql))


def _jq(words: Sequence[Token]) -> tuple[Token, list[str], str | None] | None:
    """(filter word, input files, here-string variable) of a `jq` command."""
    at = _program_at(words, "jq")
    if at is None:
        return None
    filt: Token | None = None
    files: list[str] = []
    here: str | None = None
    k = at + 1
    while k < len(words):
        t = words[k].text
        if t in ("<<<", "<") and k + 1 < len(words):
            files, here = (files, words[k + 1].text) if t == "<<<" else ([*files, words[k + 1].text], here)
            k += 2
            continue
        if t.startswith("<<<"):
            here = t[3:]
        elif t in ("-f", "--from-file"):
            return None  # the filter is in a file
        elif t in _JQ_ARG2 or t in _JQ_ARG1:
            k += 3 if t in _JQ_ARG2 else 2
            continue
        elif t in ("--args", "--jsonargs") and filt is not None:
            break
        elif t.startswith("-") and len(t) > 1 and filt is None:
            k += 1  # an option without a value (`-r`, `-e`)
            continue
        elif filt is None:
            filt = words[k]
        else:
            files.append(t.rstrip(")"))  # `$(jq … file)`
        k += 1
    if filt is None:
        return None
    m = _VAR.match(here or "")
    return filt, files, m.group(1) if m else None


def _reads(script: ScriptText, filt: Token) -> list[Read]:
    chars = word_chars(script, filt)
    return [Read(r.field, span_in(chars, r.offset, len(r.field)), r.compared) for r in field_reads(chars[0])]


def _source(words: Sequence[Token], by_var: dict[str, RestCall], by_file: dict[str, RestCall]) -> RestCall | None:
    """`echo "$X"`, `printf '%s' "$X"`, `cat f.json`: the call whose response this prints."""
    if not words or words[0].text not in ("echo", "printf", "cat"):
        return None
    if words[0].text == "cat":
        return next((by_file[w.text] for w in words[1:] if w.text in by_file), None)
    names = [m.group(1) for w in words[1:] if (m := _VAR.match(w.text))]
    return by_var.get(names[-1]) if names else None


def job_uses(doc: Document, cmds: Sequence[tuple[list[Token], ci.ScriptItem]],
             texts: dict[Route, ScriptText]) -> list[tuple[Route, Use]]:
    """Every API call the commands make, in order, with the response reads attached to it."""
    bases = _bases(doc, cmds)
    out: list[tuple[Route, Use]] = []
    by_var: dict[str, RestCall] = {}
    by_file: dict[str, RestCall] = {}
    feeding: tuple[RestCall, str | None] | None = None  # what the previous command wrote to stdout
    prev: tuple[list[Token], ci.ScriptItem] | None = None
    for words, item in cmds:
        script = texts[item.route]
        pipe_in = prev is not None and prev[1].route == item.route and piped(doc, prev[0][-1], words[0])
        source, feeding, prev = (feeding if pipe_in else None), None, (words, item)
        found = _client(words)
        if found is not None:
            at, program, var = found
            call = parse_call(program, words[at + 1 :], script, bases)
            use: Use | None = (call.rest or call.graphql) if call is not None else None
            if call is None or use is None:
                continue
            out.append((item.route, use))
            if call.rest is not None:
                feeding = (call.rest, var)
                if var:
                    by_var[var] = call.rest
                if call.out_file and call.out_file != "-":
                    by_file[call.out_file] = call.rest
            continue
        jq = _jq(words)
        if jq is None:
            src = _source(words, by_var, by_file)
            feeding = (src, None) if src is not None else None
        else:
            _attach_reads(jq, source, by_var, by_file, script)
    return out


def _attach_reads(jq: tuple[Token, list[str], str | None], source: tuple[RestCall, str | None] | None,
                  by_var: dict[str, RestCall], by_file: dict[str, RestCall], script: ScriptText) -> None:
    """A jq command's reads belong to the call whose output it reads: piped in, a variable or a file."""
    filt, files, here = jq
    if source is not None and source[1]:
        by_var.pop(source[1], None)  # `X=$(curl … | jq …)`: X holds jq's output, not the response
    target = (source[0] if source else None) or (by_var.get(here) if here else None)
    target = target or next((by_file[f] for f in files if f in by_file), None)
    if target is not None:
        target.reads.extend(_reads(script, filt))
