"""The API calls of one job's (or one script file's) commands: what the variables in their URLs
hold, and which jq filter reads which call's response.

The commands come from `scanner.readers.shell.read`, with the commands nested in others and the
bodies of the functions they call already written out (`api() { curl "$@"; }` then
`api -X PUT URL` is a curl command). Variables are followed in the order the commands run:
`API=$URL/api/v4/projects/1` (also `export`, `local`, `readonly`, `declare`, and the CI file's
`variables:`) makes `curl -X POST "$API/managed_licenses"` a call to
`/projects/1/managed_licenses`, placed at `$API`; `${VAR}`, `${VAR:-default}`, `${VAR:=default}`
`${VAR:?}` and `${VAR%/}` are read too. A value that holds a command's output or grows past
`MAX_VALUE` characters is unknown, and an unknown variable stays in the URL as written.

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
from scanner.readers.api.shell.clients import CLIENTS, parse_call, span_in
from scanner.readers.api.shell.jq import field_reads
from scanner.readers.shell import Chars, Command, Pos, ScriptText, Token, program_index, program_name, word_chars

Use = RestCall | GraphqlText
MAX_VALUE = 4096  # characters a variable's value may hold and still be followed
_VAR = re.compile(r"^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$")
_REFERENCE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-=?+])([^}]*)|(%%?|##?)([^}]*))?\}"
                        r"|([A-Za-z_][A-Za-z0-9_]*))")
_DECLARE = frozenset({"export", "local", "readonly", "declare", "typeset"})
_JQ_ARG1 = frozenset({"--indent", "-L", "--tab-width"})
_JQ_ARG2 = frozenset({"--arg", "--argjson", "--slurpfile", "--rawfile"})

Env = dict[str, str | None]  # a variable's value, None when it is not known


def _ci_env(doc: Document, cmds: Sequence[tuple[list[Token], ci.ScriptItem]]) -> Env:
    """The variables the CI file sets for the job (its own and the global ones)."""
    env: Env = {}
    if doc.kind != "gitlab-ci" or not cmds:
        return env
    job = cmds[0][1].job
    for route, block in ci.variable_blocks(doc):
        if len(route) == 2 or route[:2] == job[:2]:
            for name, value in block.items():
                text = ci.variable_value(value)
                env[str(name)] = text if isinstance(text, str) and len(text) <= MAX_VALUE else None
    return env


def expand(chars: Chars, env: Env) -> Chars:
    """A word with the known variables written in; each character of a value is placed where the
    reference to it is written."""
    text, positions = chars
    if "$" not in text:
        return chars
    out: list[str] = []
    where: list[Pos] = []
    last = 0
    for m in _REFERENCE.finditer(text):
        name = m.group(1) or m.group(6)
        value = env.get(name)
        operator, default = m.group(2) or "", m.group(3)
        if operator[-1:] in "-=" and operator and value is None and "$" not in default:
            value = default  # `${VAR:-https://gitlab.example.com}`
        elif operator[-1:] == "?" and value is None:
            value = "${" + name + "}"  # `${CI_API_V4_URL:?}`: the variable itself, or an error
        elif operator[-1:] == "+":
            value = default if value else None
        elif value is not None and m.group(4):
            value = _trim(value, m.group(4), m.group(5))
        if value is None or len(value) > MAX_VALUE:
            continue
        out.append(text[last : m.start()])
        where.extend(positions[last : m.start()])
        out.append(value)
        where.extend([positions[m.start()]] * len(value))
        last = m.end()
    if not out:
        return chars
    out.append(text[last:])
    where.extend(positions[last:])
    return "".join(out), tuple(where)


def _trim(value: str, operator: str, pattern: str) -> str | None:
    """`${VAR%/}`, `${VAR#https://}`: a literal pattern removed; a glob pattern is not followed."""
    if any(c in pattern for c in "*?["):
        return None
    if operator.startswith("%"):
        return value.removesuffix(pattern)
    return value.removeprefix(pattern)


def _assign(env: Env, words: Sequence[Token]) -> None:
    """`NAME=value` words before a command (or alone), and after export/local/readonly/declare."""
    declaring = bool(words) and words[0].text in _DECLARE
    for w in words[1:] if declaring else words:
        name, eq, _ = w.text.partition("=")
        if eq and name.isidentifier():
            value = expand(word_chars(w), env)[0][len(name) + 1 :]
            known = "$(" not in value and "`" not in value and len(value) <= MAX_VALUE
            env[name] = value if known else None
        elif not declaring:
            return  # the program: what follows are its arguments


def _expanded(words: Sequence[Token], env: Env) -> list[Token]:
    """The words with the known variables written in."""
    out: list[Token] = []
    for w in words:
        if "$" not in w.text:
            out.append(w)
            continue
        chars = word_chars(w)
        written = expand(chars, env)
        out.append(w if written is chars else Token(written[0], w.line, w.column, w.end_column, chars=written))
    return out


def _client(words: Sequence[Token]) -> tuple[int, str] | None:
    """(index, program) of an HTTP client the command runs, if any."""
    at = program_index(list(words))
    if at is None:
        return None
    program = program_name(words[at].text)
    if program not in CLIENTS or (program == "glab" and not (at + 1 < len(words) and words[at + 1].text == "api")):
        return None
    return at, program


def _jq(words: Sequence[Token]) -> tuple[Token, list[str], str | None] | None:
    """(filter word, input files, here-string variable) of a `jq` command."""
    at = program_index(list(words))
    if at is None or program_name(words[at].text) != "jq":
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
        elif t.startswith("<") and len(t) > 1:
            files.append(t[1:])
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
        elif not t.startswith(">"):
            files.append(t)
        k += 1
    if filt is None:
        return None
    m = _VAR.match(here or "")
    return filt, files, m.group(1) if m else None


def _reads(filt: Token) -> list[Read]:
    chars = word_chars(filt)
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
    env = _ci_env(doc, cmds)
    out: list[tuple[Route, Use]] = []
    by_var: dict[str, RestCall] = {}
    by_file: dict[str, RestCall] = {}
    writes: dict[int, RestCall] = {}  # id of a command → the response it writes to stdout
    for words, item in cmds:
        source = writes.get(id(words.piped_from)) if isinstance(words, Command) and words.piped_from else None
        capture = words.capture if isinstance(words, Command) else None
        _assign(env, words)
        found = _client(words)
        if found is not None:
            at, program = found
            call = parse_call(program, _expanded(words[at + 1 :], env))
            use: Use | None = (call.rest or call.graphql) if call is not None else None
            if call is None or use is None:
                continue
            out.append((item.route, use))
            if call.rest is not None:
                writes[id(words)] = call.rest
                if capture:
                    by_var[capture] = call.rest
                if call.out_file and call.out_file != "-":
                    by_file[call.out_file] = call.rest
            continue
        jq = _jq(words)
        if jq is None:
            src = _source(words, by_var, by_file)
            if src is not None:
                writes[id(words)] = src
            continue
        filt, files, here = jq
        target = source or (by_var.get(here) if here else None)
        target = target or next((by_file[f] for f in files if f in by_file), None)
        if target is not None:
            target.reads.extend(_reads(filt))
    return out
