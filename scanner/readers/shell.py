"""Shell commands inside job scripts, tokenised with their source positions.

A script item is a YAML scalar; each of its lines is mapped back to the source line and
column it was written on (exact for plain, quoted one-liners and literal `|` blocks, the
common forms). The tokenizer is deliberately small: words, quotes, `\\`-newline
continuation, comments, the separators `;`, `&&`, `||`, `|`, `|&`, `&` (not the `&` of `&>f`,
`2>&1`). It never runs anything, never fails and always moves on: text it cannot split stays in a word.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from scanner.core.files import head
from scanner.core.tree import Span, Tree

Pos = tuple[int, int]  # 1-based line, column


@dataclass(frozen=True, slots=True)
class Token:
    text: str  # the word with quotes removed
    line: int
    column: int
    end_column: int

    @property
    def span(self) -> Span:
        return (self.line, self.column, self.line, self.end_column)


@dataclass(frozen=True, slots=True)
class ScriptText:
    """One script item: its text and the source position of each of its lines."""

    text: str
    line_starts: tuple[Pos, ...]
    # In a one-line quoted scalar, where an escape (`''`, `\"`, `\x41`) is longer in the source
    # than in the value: (offset in the value, extra source characters).
    escapes: tuple[tuple[int, int], ...] = ()
    # A value line folded from several source lines (`>` blocks, multi-line plain scalars): each
    # source line after the first as (value line index, offset in that line, source line, column).
    folds: tuple[tuple[int, int, int, int], ...] = ()

    def position(self, line_index: int, offset: int) -> Pos:
        line, col = self.line_starts[min(line_index, len(self.line_starts) - 1)]
        if self.escapes and line_index == 0:
            col += sum(extra for at, extra in self.escapes if at < offset)
        if self.folds:
            for index, at, fold_line, fold_col in self.folds:
                if index == line_index and at <= offset:
                    line, col = fold_line, fold_col - at
        return line, col + offset

    def locate(self, line: int, column: int) -> tuple[int, int] | None:
        """The value line index and offset written at source (`line`, `column`), if any."""
        for i, text in enumerate(self.text.split("\n")):
            pieces = [(0, *self.line_starts[min(i, len(self.line_starts) - 1)])]
            pieces += [(at, fold_line, fold_col) for index, at, fold_line, fold_col in self.folds if index == i]
            ends = [at - 1 for at, _, _ in pieces[1:]] + [len(text)]  # a piece ends at the joining space
            for (at, piece_line, piece_col), end in zip(pieces, ends, strict=True):
                j = at + column - piece_col
                if piece_line == line and at <= j < end:
                    return i, j
        return None

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
            for n in range(cursor, last + 1):
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
    for first in range(cursor, last + 1):
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


_SEPARATORS = (";", "&&", "||", "|", "&")


def commands(script: ScriptText) -> list[list[Token]]:
    """Split a script into simple commands, each a list of positioned words."""
    out: list[list[Token]] = []
    current: list[Token] = []
    lines = script.text.split("\n")
    i = 0
    while i < len(lines):
        text = lines[i]
        j = 0
        while j < len(text):
            ch = text[j]
            if ch in " \t" or (ch == "\\" and j == len(text) - 1):
                j += 1
            elif ch == "#" and (j == 0 or text[j - 1] in " \t;"):
                break  # comment to end of line
            elif text.startswith(_SEPARATORS, j) and not text.startswith("&>", j):
                if current:
                    out.append(current)
                    current = []
                j += 2 if text.startswith(("&&", "||", "|&"), j) else 1
            else:
                word, k = _word(text, j)
                line, col = script.position(i, j)
                current.append(Token(word, line, col, col + (k - j)))
                j = max(k, j + 1)  # a word is never empty: the scan always moves on
        if text.endswith("\\") and not text.endswith("\\\\"):
            i += 1
            continue  # continuation: the command goes on
        if current:
            out.append(current)
            current = []
        i += 1
    if current:
        out.append(current)
    return out


def _word(text: str, j: int) -> tuple[str, int]:
    """Read one word starting at j: returns its unquoted text and the index after it."""
    buf: list[str] = []
    quote = ""
    n = len(text)
    while j < n:
        ch = text[j]
        if quote:
            if ch == quote:
                quote = ""
            elif ch == "\\" and quote == '"' and j + 1 < n:
                j += 1
                buf.append(text[j])
            else:
                buf.append(ch)
        elif ch in "'\"":
            quote = ch
        elif ch in " \t;|&" and not (ch == "&" and (text[j + 1 : j + 2] == ">" or text[j - 1 : j] in ("<", ">"))):
            break  # `&>file`, `2>&1`, `<&3`: the `&` belongs to the redirection word
        elif ch == "\\":
            if j + 1 < n:
                j += 1
                buf.append(text[j])
        else:
            buf.append(ch)
        j += 1
    return "".join(buf), j


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


def programs_run(words: list[Token]) -> dict[str, int]:
    """Every program name a command may run, with the index of its word: the program, and for
    `docker run [options] …` each non-option word read as an image (last path segment, no tag)."""
    at = program_index(words)
    if at is None:
        return {}
    name = program_name(words[at].text)
    found = {name: at}
    if name in _CONTAINER_RUNNERS and at + 1 < len(words) and words[at + 1].text == "run":
        for i in range(at + 2, len(words)):
            if not words[i].text.startswith("-"):
                found.setdefault(words[i].text.split("@", 1)[0].rsplit("/", 1)[-1].split(":", 1)[0], i)
    return found


_WRAPPERS = frozenset({"sudo", "env", "exec", "time", "nohup", "command", "eval"})
_ARGUMENT_OPTIONS = {"sudo": frozenset({"-u", "-g", "-p", "-C", "-D", "-U"}), "env": frozenset({"-u", "-C", "-S"})}


def program_index(words: list[Token]) -> int | None:
    """Index of the program word, after `VAR=value`, wrappers and their options (`sudo -u git -H bundle exec`)."""
    wrapper, skip = "", -1
    for i, tok in enumerate(words):
        t = tok.text
        if i == skip or "=" in t and t.split("=", 1)[0].isidentifier():
            continue
        if wrapper in _ARGUMENT_OPTIONS and t.startswith("-"):
            skip = i + 1 if t in _ARGUMENT_OPTIONS[wrapper] else skip
        elif t in _WRAPPERS or (t == "bundle" and i + 1 < len(words) and words[i + 1].text == "exec"):
            wrapper = t
        else:
            return i
    return None


def program_name(word: str) -> str:
    """`/usr/bin/gitlab-runner.exe` → `gitlab-runner`; `.\\gitlab-runner.exe` too."""
    base = word.replace("\\", "/").rsplit("/", 1)[-1]
    return base[:-4] if base.lower().endswith(".exe") else base


_SHELLS = ("sh", "bash", "zsh", "ksh", "dash", "ash")


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
