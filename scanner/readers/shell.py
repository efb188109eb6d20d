"""Shell scripts read as bash reads them: commands with the source position of every word.

A script is a script file or one script item of a CI file (a YAML scalar whose lines are mapped
back to the source lines and columns they were written on: exact for plain, quoted one-liners and
literal `|` blocks, the common forms). `read` splits it into simple commands in one pass, in
linear time, and never fails — text it cannot make sense of stays in a word:

* words follow bash's quoting (`'…'`, `"…"`, `$'…'`, `\\`, quotes spanning lines), with `$(…)`,
  backticks and `${…}` kept whole inside the word; the commands inside `$(…)` and backticks are
  read too, before the command they are part of (`X=$(curl …)`: the curl command, then the
  assignment; the variable it is assigned to is the inner command's `capture`);
* separators `;`, `&&`, `||`, `|`, `|&`, `&`, newlines and comments end a command; a command
  whose output is piped into the next says so (`piped_from`);
* compound commands are read through: `if`/`then`/`else`/`fi`, loops, `{ …; }`, `( … )`, `case`
  patterns; `for`/`select`/`case` headers are not commands;
* heredoc bodies are data, not commands — unless the command feeds them to a shell (`bash <<EOF`,
  `ssh host <<EOF`, `sudo -i <<EOF`, `kubectl exec -i pod -- sh <<EOF`) or writes a shell script
  (`cat > run.sh <<EOF`), where the body is read as a script;
* commands run by other commands are read as commands of their own, after them:
  `ssh host 'gitlab-ctl promote-db'`, `bash -c '…'`, `su - git -c '…'`, `eval "…"`,
  `docker exec CONTAINER cmd…`, `kubectl exec POD -- cmd…`;
* function definitions (`f() { …; }`, `function f { … }`) are read in place, and a call to a
  function that uses its arguments (`"$@"`, `$1`) is read again as its body with those arguments
  written in (`api() { curl -H "…" "$@"; }` then `api --request PUT URL`: a curl command whose URL
  word is the call's own), through wrappers of wrappers.

Nesting and expansion are bounded (`MAX_NESTING` levels, and the expanded and nested commands
of a script hold at most `EXPANSION_FACTOR` times its characters), so a crafted script costs time
linear in its length.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path

from scanner.core.files import head
from scanner.core.lines import lf_line_ends
from scanner.core.tree import Span, Tree

Pos = tuple[int, int]  # 1-based line, column
Chars = tuple[str, tuple[Pos, ...]]  # a word's value and the position of each of its characters

MAX_NESTING = 8  # `$(…)`, `bash -c '…'`, function calls inside each other
EXPANSION_FACTOR = 8  # characters of expanded and nested commands per character of the script, at most
_MAX_REFERENCES = 16  # positional parameters written into one word, at most
_FOLD_LOOKAHEAD = 64  # source lines searched ahead for a value line before giving up on it


@dataclass(frozen=True, slots=True)
class Token:
    text: str  # the word with quotes removed; `$(…)`, `${…}` and backticks kept as written
    line: int
    column: int
    end_column: int
    # Where the word is written in the text of the script it was read from ([start, end) offsets);
    # `chars`: the value and character positions of a word built by the reader (a function's
    # argument written into its body), which has no single place in any script.
    origin: ScriptText | None = field(default=None, compare=False, repr=False)
    start: int = field(default=-1, compare=False, repr=False)
    end: int = field(default=-1, compare=False, repr=False)
    chars: Chars | None = field(default=None, compare=False, repr=False)

    @property
    def span(self) -> Span:
        return (self.line, self.column, self.line, self.end_column)


@dataclass(frozen=True, slots=True)
class ScriptText:
    """One script: its text and the source position of each of its lines."""

    text: str
    line_starts: tuple[Pos, ...]
    # In a one-line quoted scalar, where an escape (`''`, `\"`, `\x41`) is longer in the source
    # than in the value: (offset in the value, extra source characters).
    escapes: tuple[tuple[int, int], ...] = ()
    # A value line folded from several source lines (`>` blocks, multi-line plain scalars): each
    # source line after the first as (value line index, offset in that line, source line, column).
    folds: tuple[tuple[int, int, int, int], ...] = ()
    # A script read from inside a word (`bash -c '…'`): the source position of each character.
    chars: tuple[Pos, ...] = ()
    _offsets: tuple[int, ...] = field(init=False, repr=False, compare=False)
    _escape_at: tuple[int, ...] = field(init=False, repr=False, compare=False)
    _escape_sum: tuple[int, ...] = field(init=False, repr=False, compare=False)
    _folds: dict[int, tuple[tuple[int, int, int], ...]] = field(init=False, repr=False, compare=False)
    _plain: bool = field(init=False, repr=False, compare=False)  # each line at its start position, no more

    def __post_init__(self) -> None:
        lengths = [len(line) + 1 for line in self.text.split("\n")]
        object.__setattr__(self, "_offsets", (0, *accumulate(lengths[:-1])))
        escapes = sorted(self.escapes)
        object.__setattr__(self, "_escape_at", tuple(at for at, _ in escapes))
        object.__setattr__(self, "_escape_sum", tuple(accumulate(extra for _, extra in escapes)))
        folds: dict[int, list[tuple[int, int, int]]] = {}
        for index, at, line, col in self.folds:
            folds.setdefault(index, []).append((at, line, col))
        object.__setattr__(self, "_folds", {k: tuple(sorted(v)) for k, v in folds.items()})
        object.__setattr__(self, "_plain", not (self.escapes or self.folds or self.chars) and bool(self.line_starts))

    def position(self, line_index: int, offset: int) -> Pos:
        if self.chars:
            at = self._offsets[min(line_index, len(self._offsets) - 1)] + offset
            if at < len(self.chars):
                return self.chars[at]
            line, col = self.chars[-1]
            return line, col + 1 + at - len(self.chars)
        line, col = self.line_starts[min(line_index, len(self.line_starts) - 1)] if self.line_starts else (1, 1)
        if self._escape_at and line_index == 0:
            k = bisect_right(self._escape_at, offset - 1)
            col += self._escape_sum[k - 1] if k else 0
        pieces = self._folds.get(line_index)
        if pieces:
            k = bisect_right(pieces, (offset, 1 << 62, 0))
            if k:
                at, line, fold_col = pieces[k - 1]
                col = fold_col - at
        return line, col + offset

    def pos_at(self, offset: int) -> Pos:
        """The source position of the character at `offset` in `text`."""
        i = bisect_right(self._offsets, offset) - 1
        if self._plain:
            line, col = self.line_starts[min(i, len(self.line_starts) - 1)]
            return line, col + offset - self._offsets[i]
        return self.position(i, offset - self._offsets[i])

    def positions(self, offsets: Sequence[int]) -> tuple[Pos, ...]:
        """`pos_at` of each of the ascending `offsets`."""
        if self.chars:
            last = len(self.chars) - 1
            return tuple(self.chars[o] if o <= last else self.pos_at(o) for o in offsets)
        if not self._plain:
            return tuple(map(self.pos_at, offsets))
        out: list[Pos] = []
        starts, line_offsets = self.line_starts, self._offsets
        i, next_start = -1, -1
        line = col = base = 0
        for o in offsets:
            if o >= next_start or o < base:
                i = bisect_right(line_offsets, o) - 1
                base = line_offsets[i]
                next_start = line_offsets[i + 1] if i + 1 < len(line_offsets) else 1 << 62
                line, col = starts[min(i, len(starts) - 1)]
            out.append((line, col + o - base))
        return tuple(out)

    def lines(self) -> Iterator[tuple[str, Pos]]:
        for i, text in enumerate(self.text.split("\n")):
            yield text, self.position(i, 0)


def map_lines(text: str, span: Span, source: Sequence[str]) -> ScriptText:
    """Find where each line of a scalar's value was written, within the scalar's own span."""
    start_line, start_col, end_line, _ = span
    quote = source[start_line - 1][start_col - 1 : start_col] if start_line <= len(source) else ""
    if quote in ("'", '"') and start_line == end_line and "\n" not in text:
        return ScriptText(text, ((start_line, start_col + 1),), _escapes(source[start_line - 1], start_col, quote))
    fallback = (start_line, start_col + (1 if quote in ("'", '"') else 0))
    starts: list[Pos] = []
    folds: list[tuple[int, int, int, int]] = []
    cursor, first_col, last = start_line, start_col - 1, min(end_line, len(source))
    for index, content in enumerate(text.split("\n")):
        stripped = content.lstrip()
        found: Pos | None = None
        if stripped:
            for n in range(cursor, min(last, cursor + _FOLD_LOOKAHEAD) + 1):
                at = source[n - 1].find(stripped.rstrip(), first_col if n == start_line else 0)
                if at >= 0:
                    found = (n, at + 1 - (len(content) - len(stripped)))
                    cursor = n + 1
                    break
            if found is None and (folded := _unfold(content, source, cursor, last,
                                                    first_col if cursor == start_line else 0)) is not None:
                found, segments = folded
                folds += ((index, at, n, col) for at, n, col in segments)
                cursor = segments[-1][1] + 1 if segments else found[0] + 1
        starts.append(found or fallback)
    return ScriptText(text, tuple(starts), folds=tuple(folds))


def _unfold(content: str, source: Sequence[str], cursor: int, last: int,
            skip: int) -> tuple[Pos, list[tuple[int, int, int]]] | None:
    """Where a value line folded from consecutive source lines (joined by single spaces) was
    written: its start, and (offset, line, column) of each following piece; None if it was not.
    `skip`: columns of the first line before the scalar (`- ` of a plain scalar in a list)."""
    for first in range(cursor, min(last, cursor + _FOLD_LOOKAHEAD) + 1):
        begin = skip if first == cursor else 0
        piece = source[first - 1][begin:].strip()
        if not piece or not content.startswith(piece):
            continue
        start = (first, source[first - 1].index(piece, begin) + 1)
        segments: list[tuple[int, int, int]] = []
        offset, n = len(piece), first
        while offset < len(content) and content[offset] == " " and n < last:
            n += 1
            piece = source[n - 1].strip()
            if not piece or not content.startswith(piece, offset + 1):
                return None
            segments.append((offset + 1, n, source[n - 1].index(piece) + 1))
            offset += 1 + len(piece)
        return (start, segments) if offset == len(content) else None
    return None


_ESCAPE_LENGTH = {"x": 4, "u": 6, "U": 10}


def _escapes(line: str, start: int, quote: str) -> tuple[tuple[int, int], ...]:
    """Escapes in a one-line quoted scalar whose content starts at index `start` of `line`."""
    out: list[tuple[int, int]] = []
    i, k = start, 0
    while i < len(line):
        ch = line[i]
        if ch == quote and not (quote == "'" and line[i + 1 : i + 2] == "'"):
            break  # the closing quote
        if quote == "'" and ch == "'":
            out.append((k, 1))  # `''` is one quote
            i += 2
        elif quote == '"' and ch == "\\":
            length = _ESCAPE_LENGTH.get(line[i + 1 : i + 2], 2)
            out.append((k, length - 1))
            i += length
        else:
            i += 1
        k += 1
    return tuple(out)


# commands ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Heredoc:
    """A heredoc body: [start, end) offsets in the text of the script it is written in."""

    start: int
    end: int
    quoted: bool  # `<<'EOF'`: no expansion in the body


class Command(list[Token]):
    """A simple command: its words, and how it is connected to the commands around it."""

    __slots__ = ("capture", "heredocs", "piped_from", "script")

    def __init__(self, words: Sequence[Token], script: ScriptText, piped_from: Command | None = None,
                 capture: str | None = None) -> None:
        super().__init__(words)
        self.script = script  # the script the command's words are read from
        self.piped_from = piped_from  # the command whose output this one reads on its stdin
        self.capture = capture  # `X=$(cmd)`: the variable this command's output is assigned to
        self.heredocs: list[Heredoc] = []


_BLANKS = " \t\r"
_PLAIN = re.compile(r"[^\s'\"\\$`;&|<>()]+")
_NAME_EQ = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=\"?$")
_RESERVED_SKIP = frozenset({"if", "then", "elif", "else", "do", "while", "until", "!", "time", "fi", "done"})
_HEADERS = frozenset({"for", "select", "case"})


@dataclass(slots=True)
class _Group:
    kind: str  # "{" or "("
    function: str | None
    first: int  # index in the output of the first command inside


class _Reader:
    """One pass over a script's text; commands go to `out` in the order bash runs them."""

    def __init__(self, script: ScriptText, budget: list[int]) -> None:
        self.script = script
        self.text = script.text
        self.out: list[Command] = []
        self.functions: dict[str, tuple[int, int]] = {}  # name → [first, end) of its body in `out`
        self.budget = budget  # characters the expanded and nested commands may still hold

    # words ------------------------------------------------------------------------------------
    def word(self, i: int, end: int, depth: int) -> tuple[str, int, str | None]:
        """The word starting at `i`: its value, the index after it, and the variable a `$(…)` in
        it is assigned to (`X=$(…)`)."""
        text = self.text
        buf: list[str] = []
        capture: str | None = None
        start = i
        while i < end:
            c = text[i]
            if c in _BLANKS or c == "\n":
                break
            if c in ";|()":
                if c == "(" and buf and buf[-1][-1:] in "<>":  # `<(cmd)`: its commands are read
                    j = self._substitution(i + 1, end, depth, None)
                    buf.append(text[i:j])
                    i = j
                    continue
                if c == "(" and buf and buf[-1][-1:] in "=@!+*?":  # arrays, extglobs
                    j = _balanced(text, i, end)
                    buf.append(text[i:j])
                    i = j
                    continue
                break
            if c == "&":
                if text.startswith("&>", i) and i == start or buf and buf[-1][-1:] in "<>":
                    buf.append(c)  # `&>file`, `2>&1`, `<&3`
                    i += 1
                    continue
                break
            if c in "<>":
                prev = text[i - 1] if i > start else ""
                if prev and prev not in "<>&" and not (prev.isdigit() and text[start:i].isdigit()):
                    break  # `cat<<EOF`: the redirection is a word of its own; `2>&1` is one word
                buf.append(c)
                i += 1
            elif c == "'":
                j = text.find("'", i + 1, end)
                j = end if j < 0 else j
                buf.append(text[i + 1 : j])
                i = j + 1
            elif c == '"':
                i = self._double(i + 1, end, depth, buf, start)
            elif c == "\\":
                if text.startswith("\\\n", i):
                    i += 2
                    continue
                buf.append(text[i + 1 : i + 2])
                i += 2
            elif c == "$":
                if text.startswith("$(", i):
                    if capture is None and _NAME_EQ.match(text, start, i):
                        capture = text[start:i].split("=", 1)[0]
                    j = self._substitution(i + 2, end, depth, capture)
                    buf.append(text[i:j])
                    i = j
                elif text.startswith("${", i):
                    j = _braces(text, i + 2, end)
                    buf.append(text[i:j])
                    i = j
                elif text.startswith("$'", i):
                    i = _ansi_c(text, i + 2, end, buf)
                else:
                    buf.append(c)
                    i += 1
            elif c == "`":
                j = self._backticks(i + 1, end, depth)
                buf.append(text[i:j])
                i = j
            else:
                m = _PLAIN.match(text, i, end)
                if m is None:  # a character no rule above takes: part of the word
                    buf.append(c)
                    i += 1
                else:
                    buf.append(m.group())
                    i = m.end()
        return "".join(buf), min(max(i, start + 1), end), capture

    def _double(self, i: int, end: int, depth: int, buf: list[str], start: int) -> int:
        """A double-quoted part from after its opening quote; returns the index after it."""
        text = self.text
        while i < end:
            c = text[i]
            if c == '"':
                return i + 1
            if c == "\\" and i + 1 < end and text[i + 1] in '"\\$`\n':
                if text[i + 1] != "\n":
                    buf.append(text[i + 1])
                i += 2
            elif text.startswith("$(", i):
                capture = text[start:i].split("=", 1)[0] if _NAME_EQ.match(text, start, i) else None
                j = self._substitution(i + 2, end, depth, capture)
                buf.append(text[i:j])
                i = j
            elif text.startswith("${", i):
                j = _braces(text, i + 2, end)
                buf.append(text[i:j])
                i = j
            elif c == "`":
                j = self._backticks(i + 1, end, depth)
                buf.append(text[i:j])
                i = j
            else:
                j = i + 1
                while j < end and text[j] not in '"\\$`':
                    j += 1
                buf.append(text[i:j])
                i = j
        return end

    def _substitution(self, i: int, end: int, depth: int, capture: str | None) -> int:
        """`$(…)` from after its `(`: its commands are read (before the command holding it); returns
        the index after the closing `)`. `$((…))` is arithmetic, not commands."""
        if self.text.startswith("(", i) or depth >= MAX_NESTING:
            return _balanced(self.text, i - 1, end)
        first = len(self.out)
        j = self.run(i, end, depth + 1, closing=True)
        if capture is not None and len(self.out) > first:
            self.out[-1].capture = capture
        return j

    def _backticks(self, i: int, end: int, depth: int) -> int:
        """`` `…` `` from after the opening backtick: its commands are read; returns the index after it."""
        text = self.text
        j = i
        while j < end and text[j] != "`":
            j += 2 if text[j] == "\\" else 1
        close = min(j, end)
        if depth < MAX_NESTING:
            self.run(i, close, depth + 1)
        return min(close + 1, end)

    # commands ---------------------------------------------------------------------------------
    def run(self, i: int, end: int, depth: int, closing: bool = False) -> int:
        """Read commands from `i` to `end` (or to the `)` closing a `$(`); returns where it stopped."""
        text = self.text
        words: list[Token] = []
        capture: str | None = None
        piped: Command | None = None  # the previous command, when it piped into this one
        groups: list[_Group] = []
        pending: list[tuple[str, bool, bool, Command | None]] = []  # heredocs waiting for the newline
        function: str | None = None  # a function definition's name, waiting for its body
        expect_name = expect_delimiter = pending_strip = False
        case_depth = 0
        header = False  # the command is a `for`/`select`/`case` header

        def finish(pipe: bool = False) -> None:
            nonlocal words, capture, piped, header
            cmd: Command | None = None
            if words and not header:
                cmd = Command(words, self.script, piped, capture)
                self.out.append(cmd)
                for k, (delimiter, strip, quoted, owner) in enumerate(pending):
                    if owner is None:
                        pending[k] = (delimiter, strip, quoted, cmd)
            words, capture, header = [], None, False
            piped = cmd if pipe else None

        while i < end:
            c = text[i]
            if c in _BLANKS:
                i += 1
            elif c == "\\" and text.startswith("\\\n", i):
                i += 2
            elif c == "\n":
                finish()
                i = self._bodies(pending, i + 1, end, depth)
                pending = []
            elif c == "#" and not words or c == "#" and text[i - 1] in _BLANKS:
                nl = text.find("\n", i, end)
                i = end if nl < 0 else nl
            elif c == ")" and closing and not groups:
                finish()
                return i + 1
            elif c in ";&|":
                two = text[i : i + 2]
                if two in (";;", ";&"):
                    finish()
                    i += 3 if text.startswith(";;&", i) else 2
                    if case_depth:
                        i = _case_pattern(text, i, end)
                elif two in ("&&", "||"):
                    finish()
                    i += 2
                elif two == "|&" or c == "|":
                    finish(pipe=True)
                    i += 2 if two == "|&" else 1
                elif c == "&" and text.startswith("&>", i):
                    value, j, _ = self.word(i, end, depth)
                    words.append(self.token(value, i, j))
                    i = j
                else:
                    finish()
                    i += 1
            elif c == "(":
                after = _skip_blanks(text, i + 1, end)
                if text.startswith(")", after) and (len(words) == 1 or function is not None and not words):
                    function = words[0].text if words else function  # `name() …`: the body follows
                    words = []
                    i = after + 1
                elif not words:
                    groups.append(_Group("(", function, len(self.out)))
                    function = None
                    i += 1
                else:
                    finish()
                    i += 1
            elif c == ")":
                finish()
                if groups and groups[-1].kind == "(":
                    self._close(groups.pop())
                i += 1
            else:
                value, j, _ = self.word(i, end, depth)
                at_start = not words
                if expect_delimiter:
                    pending.append((value, pending_strip, value != text[i:j], None))
                    expect_delimiter = False
                if expect_name:
                    function, expect_name = value.removesuffix("()"), False
                    i = j
                    continue
                if at_start and case_depth and value == "esac":
                    case_depth -= 1
                    i = j
                    continue
                if at_start and value in _RESERVED_SKIP and text[i] not in "'\"\\":
                    i = j
                    continue
                if at_start and value == "{":
                    groups.append(_Group("{", function, len(self.out)))
                    function = None
                    i = j
                    continue
                if at_start and value == "}":
                    if groups and groups[-1].kind == "{":
                        self._close(groups.pop())
                    i = j
                    continue
                if at_start and value == "function":
                    expect_name = True
                    i = j
                    continue
                if at_start and value in _HEADERS:
                    header = True
                    if value == "case":
                        case_depth += 1
                        i = _case_start(text, j, end)
                        finish()
                        i = _case_pattern(text, i, end)
                        continue
                function = None
                if value.startswith("<<") and not value.startswith("<<<") and text[i] == "<":
                    pending_strip = value.startswith("<<-")
                    delimiter = value[3:] if pending_strip else value[2:]
                    if delimiter:
                        pending.append((delimiter, pending_strip, "'" in text[i:j] or '"' in text[i:j]
                                        or "\\" in text[i:j], None))
                    else:
                        expect_delimiter = True
                words.append(self.token(value, i, j))
                i = j
        finish()
        self._bodies(pending, end, end, depth)
        return end

    def token(self, value: str, start: int, end: int) -> Token:
        line, col = self.script.pos_at(start)
        nl = self.text.find("\n", start, end)
        if nl < 0 and self.script._plain:
            return Token(value, line, col, col + end - start, self.script, start, end)
        last_line, last_col = self.script.pos_at((nl if nl >= 0 else end) - 1)
        end_col = last_col + 1 if last_line == line and last_col >= col else col + (end - start)
        return Token(value, line, col, end_col, self.script, start, end)

    def _close(self, group: _Group) -> None:
        if group.function:
            self.functions[group.function] = (group.first, len(self.out))

    def _bodies(self, pending: list[tuple[str, bool, bool, Command | None]], i: int, end: int, depth: int) -> int:
        """Read the heredoc bodies that start at `i` (after the line that opened them)."""
        text = self.text
        runs: dict[int, bool] = {}  # id of a command → whether it runs its heredocs
        for delimiter, strip, quoted, owner in pending:
            start = j = i
            while j < end:
                nl = text.find("\n", j, end)
                line_end = end if nl < 0 else nl
                line = text[j:line_end].rstrip("\r")
                if (line.lstrip("\t") if strip else line) == delimiter:
                    i = line_end + 1 if nl >= 0 else end
                    break
                j = line_end + 1
            else:
                i = end
            body = Heredoc(start, min(j, end), quoted)
            if owner is not None:
                owner.heredocs.append(body)
                if id(owner) not in runs:
                    runs[id(owner)] = _runs_body(owner)
                if depth < MAX_NESTING and runs[id(owner)]:
                    self.run(body.start, body.end, depth + 1)
        return min(i, end)


def _skip_blanks(text: str, i: int, end: int) -> int:
    while i < end and text[i] in _BLANKS:
        i += 1
    return i


def _balanced(text: str, i: int, end: int) -> int:
    """Index after the `)` closing the `(` at `i` (parentheses counted, quotes skipped)."""
    depth = 0
    while i < end:
        c = text[i]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        elif c in "'\"":
            close = text.find(c, i + 1, end)
            i = end if close < 0 else close
        elif c == "\\":
            i += 1
        i += 1
    return end


def _braces(text: str, i: int, end: int) -> int:
    """Index after the `}` closing a `${` whose content starts at `i`."""
    depth = 1
    while i < end:
        c = text[i]
        if c == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        elif text.startswith("${", i):
            depth += 1
            i += 1
        elif c in "'\"":
            close = text.find(c, i + 1, end)
            i = end if close < 0 else close
        elif c == "\\":
            i += 1
        i += 1
    return end


_ANSI = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "f": "\f", "v": "\v",
         "\\": "\\", "'": "'", '"': '"'}


def _ansi_c(text: str, i: int, end: int, buf: list[str]) -> int:
    """`$'…'` from after its opening quote: the common escapes decoded; returns the index after it."""
    while i < end:
        c = text[i]
        if c == "'":
            return i + 1
        if c == "\\" and i + 1 < end:
            buf.append(_ANSI.get(text[i + 1], "\\" + text[i + 1]))
            i += 2
        else:
            buf.append(c)
            i += 1
    return end


_CASE_IN = re.compile(r"[^\n]*?\bin\b")


def _case_start(text: str, i: int, end: int) -> int:
    """After `case WORD in`: the index after `in` (or where it was when `in` is not on the line)."""
    m = _CASE_IN.match(text, i, end)
    return m.end() if m else i


def _case_pattern(text: str, i: int, end: int) -> int:
    """Skip blank lines, comments and the next `pattern)` of a case statement (not `esac`)."""
    while True:
        while i < end and text[i] in " \t\r\n":
            i += 1
        if text.startswith("#", i):
            nl = text.find("\n", i, end)
            i = end if nl < 0 else nl
            continue
        break
    if text.startswith("esac", i):
        return i
    j = i
    while j < end and text[j] not in ")\n":
        if text[j] in "'\"":
            close = text.find(text[j], j + 1, end)
            j = end if close < 0 else close
        j += 1
    return j + 1 if j < end and text[j] == ")" else i


# commands run by other commands -------------------------------------------------------------------

_SHELLS = ("sh", "bash", "zsh", "ksh", "dash", "ash")
# programs that run a command given to them (`_script_word`, `_nested_words`)
_RUNNERS = frozenset({*_SHELLS, "su", "runuser", "ssh", "docker", "podman", "nerdctl", "docker-compose", "kubectl",
                      "oc"})
_SSH_ARG = frozenset("bcDEeFIiJLlmOoPpQRSWwB")
_EXEC_ARG = frozenset({"-e", "--env", "--env-file", "-u", "--user", "-w", "--workdir", "--detach-keys", "--index"})
_SCRIPT_TARGET = re.compile(r"\.(?:sh|bash)$")


def _runs_body(cmd: Command) -> bool:
    """Does the command feed its heredoc to a shell, or write it to a shell script?"""
    inner = _inner_program(cmd)
    if inner is None:
        return False
    at, name = inner
    rest = [w.text for w in cmd[at + 1 :]]
    if name in _SHELLS or name in ("su", "runuser"):
        return "-c" not in rest and not any(_SCRIPT_TARGET.search(r) for r in rest)
    if name in ("sudo", "ssh"):
        return True  # `sudo -i <<EOF`, `ssh host <<EOF`: no command of their own (checked by the caller)
    if name in ("cat", "tee"):
        return any(_SCRIPT_TARGET.search(r.lstrip(">")) for r in rest)
    return False


def _inner_program(cmd: Sequence[Token]) -> tuple[int, str] | None:
    """The program that finally runs, through `docker exec`, `kubectl exec --` and `ssh HOST`
    with no command (which read their stdin): (index of its word, name)."""
    words = _without_redirects(cmd)
    at = program_index(words)
    if at is None:
        return (0, "sudo") if words and program_name(words[0].text) == "sudo" else None
    name = program_name(words[at].text)
    inner = _nested_words(words, at, name)
    if inner is not None:
        if not inner:
            return (at, name) if name == "ssh" else None
        found = _inner_program(inner)
        return (words.index(inner[found[0]]), found[1]) if found else None
    return at, name


_REDIRECT = re.compile(r"[0-9]*(?:<<?-?|>>?|&>>?|<&|>&|>\|)")


def _without_redirects(words: Sequence[Token]) -> list[Token]:
    """The words of a command without its redirections (`> f`, `2>&1`, `<<EOF`, `<<< "$X"`)."""
    out: list[Token] = []
    skip = False
    for w in words:
        if skip:
            skip = False
            continue
        m = _REDIRECT.match(w.text)
        if m is None or not m.group():
            out.append(w)
        elif m.end() == len(w.text) and not w.text.endswith("-"):
            skip = True  # the operator alone: its target is the next word
    return out


def _nested_words(words: list[Token], at: int, name: str) -> list[Token] | None:
    """The words of the command that `words[at]` (`name`) runs, when it runs one given as words:
    `docker exec C cmd…`, `kubectl exec P -- cmd…`, `ssh HOST cmd…`. None when it is not such a
    command, [] when it runs none (it reads its stdin)."""
    rest = _without_redirects(words[at + 1 :])
    if name in ("docker", "podman", "nerdctl", "docker-compose"):
        k = 0
        if name == "docker" and rest[:1] and rest[0].text == "compose":
            k = 1
        if not (rest[k : k + 1] and rest[k].text == "exec"):
            return None
        k += 1
        while k < len(rest) and rest[k].text.startswith("-"):
            k += 2 if rest[k].text in _EXEC_ARG else 1
        return rest[k + 1 :]  # after the container (or service)
    if name in ("kubectl", "oc"):
        if not any(w.text == "exec" for w in rest):
            return None
        dashes = next((k for k, w in enumerate(rest) if w.text == "--"), None)
        return rest[dashes + 1 :] if dashes is not None else None
    if name == "ssh":
        k = 0
        while k < len(rest) and rest[k].text.startswith("-"):
            t = rest[k].text
            k += 2 if len(t) == 2 and t[1] in _SSH_ARG else 1
        return rest[k + 1 :]  # after the host
    return None


def _script_word(words: list[Token], at: int, name: str) -> Token | None:
    """The word holding a script that `words[at]` runs: `bash -c '…'`, `su - git -c '…'`,
    `eval "…"` (a script in the program's word)."""
    rest = words[at + 1 :]
    if name in _SHELLS or name in ("su", "runuser"):
        for k, w in enumerate(rest[:-1]):
            t = w.text
            if t in ("-c", "--command") or (name in _SHELLS and re.fullmatch(r"-[a-z]*c[a-z]*", t)):
                return rest[k + 1]
            if t == "<<<" and name in _SHELLS:
                return rest[k + 1]  # `bash <<< "…"`
        return None
    if at and words[at - 1].text == "eval" and any(c in words[at].text for c in " \t\n;|&"):
        return words[at]  # `eval "a b; c"`: the word is a script
    return None


class _Expander:
    """Commands run by other commands, and calls of functions expanded into their bodies."""

    def __init__(self, functions: dict[str, list[Command]], budget: list[int]) -> None:
        self.functions = functions
        self.budget = budget
        self.positional: dict[str, bool] = {}

    def learn(self, reader: _Reader) -> None:
        """Add the functions a script defines (a later definition replaces an earlier one)."""
        for name, (first, end) in reader.functions.items():
            self.functions[name] = reader.out[first:end]
            self.positional.clear()

    def nested(self, cmd: Command, depth: int, at: int | None = -1) -> list[Command]:
        if depth >= MAX_NESTING or self.budget[0] <= 0:
            return []
        words: list[Token] = cmd
        at = program_index(words) if at == -1 else at
        if at is None:
            return []
        name = program_name(words[at].text)
        if name not in _RUNNERS and not (at and words[at - 1].text == "eval"):
            return []
        out: list[Command] = []
        script = _script_word(words, at, name)
        if script is not None:
            out += self._script(script, depth)
        inner = _nested_words(words, at, name)
        if inner:
            if len(inner) == 1 and name == "ssh":
                out += self._script(inner[0], depth)
            else:
                sub = Command(inner, cmd.script, None, cmd.capture)
                sub.heredocs = cmd.heredocs
                self.budget[0] -= _size(sub)
                out.append(sub)
                out += self.nested(sub, depth + 1)
        return out

    def _script(self, word: Token, depth: int) -> list[Command]:
        value, positions = word_chars(word)
        self.budget[0] -= len(value)
        if not value.strip():
            return []
        child = ScriptText(value, (), chars=positions)
        reader = _Reader(child, self.budget)
        reader.run(0, len(value), depth + 1)
        expander = _Expander(dict(self.functions), self.budget)
        expander.learn(reader)
        return expander.all(reader.out, depth + 1)

    def all(self, commands: list[Command], depth: int = 0) -> list[Command]:
        out: list[Command] = []
        for cmd in commands:
            out.append(cmd)
            at = program_index(cmd)
            out += self.nested(cmd, depth, at)
            if self.functions:
                out += self.call(cmd, depth, (), at)
        return out

    def call(self, cmd: Command, depth: int, active: tuple[str, ...], at: int | None = -1) -> list[Command]:
        """A call of a function that uses its arguments, as the commands of its body."""
        at = program_index(cmd) if at == -1 else at
        if at is None or depth >= MAX_NESTING:
            return []
        name = cmd[at].text
        body = self.functions.get(name)
        if body is None or name in active or not self.uses_arguments(name):
            return []
        args = list(cmd[at + 1 :])
        out: list[Command] = []
        copies: dict[int, Command] = {}
        shift = 0
        for inner in body:
            if self.budget[0] <= 0:
                break
            if inner and inner[0].text == "shift":
                shift += int(inner[1].text) if len(inner) > 1 and inner[1].text.isdigit() else 1
                continue
            words = _substitute(inner, args[shift:], cmd)
            if not words:
                continue
            piped = copies.get(id(inner.piped_from)) if inner.piped_from is not None else None
            copy = Command(words, inner.script, piped, inner.capture)
            copy.heredocs = inner.heredocs
            copies[id(inner)] = copy
            out.append(copy)
            self.budget[0] -= _size(copy)
            out += self.nested(copy, depth + 1)
            out += self.call(copy, depth + 1, (*active, name))
        return out

    def uses_arguments(self, name: str, seen: frozenset[str] = frozenset()) -> bool:
        """Does the function read its arguments (`$@`, `$1`…), itself or through a function it
        calls (at most `MAX_NESTING` calls deep)?"""
        if name in self.positional:
            return self.positional[name]
        if len(seen) >= MAX_NESTING:
            return False
        found = False
        for cmd in self.functions.get(name, []):
            if any(_POSITIONAL.search(w.text) for w in cmd):
                found = True
                break
            at = program_index(cmd)
            callee = cmd[at].text if at is not None else ""
            if callee in self.functions and callee not in seen and callee != name and \
                    self.uses_arguments(callee, seen | {name}):
                found = True
                break
        if not seen or found:
            self.positional[name] = found
        return found


def _size(words: Sequence[Token]) -> int:
    return sum(len(w.text) + 1 for w in words)


DEFINES_FUNCTION = re.compile(r"(?:^|[\s;&|({])(?:function[ \t]+[\w.:-]+|[\w.:-]+[ \t]*\([ \t]*\))")
_POSITIONAL = re.compile(r"\$(?:[1-9@*]|\{(?:[1-9][0-9]*|[@*])(?::[0-9]+)?\})")


def _substitute(words: Sequence[Token], args: list[Token], call: Command) -> list[Token]:
    """A body command with the call's arguments written in for `$@`, `$*`, `$1`…"""
    out: list[Token] = []
    for w in words:
        if not _POSITIONAL.search(w.text):
            out.append(w)
            continue
        whole = re.fullmatch(r"\$(?:([1-9@*])|\{([1-9][0-9]*|[@*])(?::([0-9]+))?\})", w.text)
        if whole:
            key = whole.group(1) or whole.group(2)
            if key in "@*":
                skip = int(whole.group(3)) - 1 if whole.group(3) else 0
                out += args[max(skip, 0) :]
            elif int(key) <= len(args):
                out.append(args[int(key) - 1])
            continue
        out.append(_built(w, args) if len(_POSITIONAL.findall(w.text)) <= _MAX_REFERENCES else w)
    return out


def _built(word: Token, args: list[Token]) -> Token:
    """A word with positional parameters inside it (`"$BASE/api/v4/$1"`), the arguments written in.
    The arguments' characters are where the call writes them, and so are the body's own: a finding
    in the word is about this call (where the first argument written in is)."""
    value, positions = word_chars(word)
    text: list[str] = []
    where: list[Pos] = []
    inserted: list[bool] = []
    last = 0
    for m in _POSITIONAL.finditer(value):
        text.append(value[last : m.start()])
        where.extend(positions[last : m.start()])
        inserted.extend([False] * (m.start() - last))
        key = m.group()[1:].strip("{}").split(":", 1)[0]
        chosen = args if key in "@*" else args[int(key) - 1 : int(key)]
        for k, arg in enumerate(chosen):
            a_value, a_positions = word_chars(arg)
            if k:
                text.append(" ")
                where.append(a_positions[0] if a_positions else (arg.line, arg.column))
                inserted.append(True)
            text.append(a_value)
            where.extend(a_positions)
            inserted.extend([True] * len(a_positions))
        last = m.end()
    text.append(value[last:])
    where.extend(positions[last:])
    inserted.extend([False] * (len(value) - last))
    built = "".join(text)
    if any(inserted):
        anchor = where[inserted.index(True)]
        where = [w if k else anchor for w, k in zip(where, inserted, strict=True)]
    line, col = where[0] if where else (word.line, word.column)
    return Token(built, line, col, col + len(built), chars=(built, tuple(where)))


def read(script: ScriptText) -> list[Command]:
    """Every simple command of the script, in the order bash runs them, with the commands nested
    in them and the bodies of the functions they call (see the module's docstring)."""
    return read_all([script])[0]


def read_all(scripts: Sequence[ScriptText]) -> list[list[Command]]:
    """`read` for scripts run one after the other by one shell (a CI job's `before_script` and
    `script` items): a function defined in one is called in the next."""
    budget = [EXPANSION_FACTOR * (sum(len(s.text) for s in scripts) + 64)]
    expander = _Expander({}, budget)
    out: list[list[Command]] = []
    for script in scripts:
        reader = _Reader(script, budget)
        reader.run(0, len(script.text), 0)
        expander.learn(reader)
        out.append(expander.all(reader.out))
    return out


def commands(script: ScriptText) -> list[list[Token]]:
    """Split a script into simple commands, each a list of positioned words (`read`; each is a
    `Command`, which says how it is connected to the others)."""
    return list(read(script))


def word_chars(tok: Token) -> Chars:
    """The value of a word with the source position of each of its characters (quotes removed,
    newlines inside quotes kept)."""
    if tok.chars is not None:
        return tok.chars
    if tok.origin is None or tok.start < 0:  # positions unknown: assume the word is written as its value
        return tok.text, tuple((tok.line, tok.column + k) for k in range(len(tok.text)))
    text = tok.origin.text
    raw = text[tok.start : tok.end]
    kept: Sequence[int] = range(tok.start, tok.end) if _UNQUOTED.fullmatch(raw) else _kept(text, tok.start, tok.end)
    return "".join([text[k] for k in kept]), tok.origin.positions(kept)


_UNQUOTED = re.compile(r"[^'\"\\]*")


def _kept(text: str, i: int, end: int) -> list[int]:
    """The offsets of the characters of a word's value, by bash's quoting rules."""
    kept: list[int] = []
    quote = ""
    while i < end:
        ch = text[i]
        if quote and ch == quote:
            quote = ""
        elif quote == '"' and ch == "\\" and i + 1 < end and text[i + 1] in '"\\$`\n':
            i += 1
            if text[i] != "\n":
                kept.append(i)
        elif quote:
            kept.append(i)
        elif ch in "'\"":
            quote = ch
        elif ch == "\\" and i + 1 < end:
            i += 1
            if text[i] != "\n":
                kept.append(i)
        else:
            kept.append(i)
        i += 1
    return kept


def comment_start(line: str) -> int:
    """Index where a shell comment starts in `line` (outside quotes), or len(line)."""
    quote = ""
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1] in " \t;"):
            return i
    return len(line)


_CONTAINER_RUNNERS = frozenset({"docker", "podman", "nerdctl"})


_PARAMETER = re.compile(r"\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)\})")


def programs_run(words: list[Token], variables: Mapping[str, str] | None = None) -> dict[str, int]:
    """Every program name a command may run, with the index of its word: the program (a variable
    holding its name, `$app` after `app=gitlab-runner`, read through `variables`), and for
    `docker run [options] …` each non-option word read as an image (last path segment, no tag)."""
    at = program_index(words)
    if at is None:
        return {}
    name = program_name(resolve_word(words[at].text, variables))
    found = {name: at}
    if name in _CONTAINER_RUNNERS and at + 1 < len(words) and words[at + 1].text == "run":
        for i in range(at + 2, len(words)):
            if not words[i].text.startswith("-"):
                found.setdefault(words[i].text.split("@", 1)[0].rsplit("/", 1)[-1].split(":", 1)[0], i)
    return found


_WRAPPERS = frozenset({"sudo", "env", "exec", "time", "nohup", "command", "eval", "timeout", "nice", "setsid",
                       "stdbuf", "export", "local", "readonly", "declare", "typeset"})
_ARGUMENT_OPTIONS = {
    "sudo": frozenset({"-u", "-g", "-p", "-C", "-D", "-U", "-h", "-r", "-t", "-T"}),
    "env": frozenset({"-u", "-C", "-S"}),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "nice": frozenset({"-n"}),
}
_DECLARES = frozenset({"export", "local", "readonly", "declare", "typeset"})


def resolve_word(word: str, variables: Mapping[str, str] | None) -> str:
    """A word that is only a variable (`$app`, `${app}`), as the value `variables` knows it holds."""
    m = _PARAMETER.fullmatch(word) if variables and "$" in word else None
    return variables.get(m.group(1) or m.group(2), word) if m and variables else word


def _takes_argument(option: str, options: frozenset[str]) -> bool:
    """Does a wrapper's option take the next word as its argument? `-u`, and a cluster of short
    options whose last letter takes one (`sudo -HEu git`); `-ugit` holds its argument."""
    if option in options:
        return True
    if option.startswith("--") or "=" in option:
        return False
    for k, letter in enumerate(option[1:], 1):
        if "-" + letter in options:
            return k == len(option) - 1
    return False


def program_index(words: list[Token]) -> int | None:
    """Index of the program word, after `VAR=value`, wrappers and their options (`sudo -u git -H bundle exec`)."""
    wrapper, skip = "", -1
    for i, tok in enumerate(words):
        t = tok.text
        if i == skip or "=" in t and t.split("=", 1)[0].isidentifier():
            continue
        if wrapper in _DECLARES:
            return None  # `export A B`: names, not a program
        if wrapper in _ARGUMENT_OPTIONS and t.startswith("-"):
            skip = i + 1 if _takes_argument(t, _ARGUMENT_OPTIONS[wrapper]) else skip
        elif wrapper == "timeout" and t[:1].isdigit():
            wrapper = "timeout-done"  # the duration
        elif t in _WRAPPERS or (t == "bundle" and i + 1 < len(words) and words[i + 1].text == "exec"):
            wrapper = t
        else:
            return i
    return None


# Programs GitLab renamed: the old name runs the same commands (GitLab Runner was
# `gitlab-ci-multi-runner` before 10.0).
_RENAMED = {"gitlab-ci-multi-runner": "gitlab-runner"}


def program_name(word: str) -> str:
    """`/usr/bin/gitlab-runner.exe` → `gitlab-runner`; `.\\gitlab-runner.exe` and the pre-10.0 name
    `gitlab-ci-multi-runner` too."""
    base = word.replace("\\", "/").rsplit("/", 1)[-1]
    base = base[:-4] if base.lower().endswith(".exe") else base
    return _RENAMED.get(base, base)


def script_file(text: str) -> ScriptText:
    """A script file's text as one script, each line at its own position. A lone CR ends a line, as
    in every reader (`scanner.core.lines`): it is read as LF, which keeps every offset."""
    text = lf_line_ends(text)
    return ScriptText(text, tuple((n, 1) for n in range(1, text.count("\n") + 2)))


def is_shell_script(path: Path) -> bool:
    """`*.sh` / `*.bash`, or an extensionless file whose shebang names a POSIX-style shell."""
    if path.suffix in (".sh", ".bash"):
        return True
    if path.suffix or path.name.startswith("."):
        return False
    first = (head(path, 200) or "").split("\n", 1)[0]
    if not first.startswith("#!"):
        return False
    words = first[2:].split()
    interpreter = words[1] if words and words[0].endswith("/env") and len(words) > 1 else (words or [""])[0]
    return interpreter.rsplit("/", 1)[-1] in _SHELLS


def parse_script(text: str) -> Tree:
    """A script is one document: its text. Findings carry exact spans of the words they name."""
    lines = text.count("\n") + 1
    return Tree(roots=[text], root_spans=[(1, 1, lines, 1)])
