"""Shell commands inside job scripts, tokenised with their source positions.

A script item is a YAML scalar; each of its lines is mapped back to the source line and
column it was written on (exact for plain, quoted one-liners and literal `|` blocks, the
common forms). The tokenizer is deliberately small: words, quotes, `\\`-newline
continuation, comments and the separators `;`, `&&`, `||`, `|`, `&`. It never runs
anything and never fails: text it cannot split stays inside a word.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from scanner.discover import head
from scanner.tree import Span, Tree

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

    def position(self, line_index: int, offset: int) -> Pos:
        line, col = self.line_starts[min(line_index, len(self.line_starts) - 1)]
        if self.escapes and line_index == 0:
            col += sum(extra for at, extra in self.escapes if at < offset)
        return line, col + offset

    def lines(self) -> Iterator[tuple[str, Pos]]:
        for i, text in enumerate(self.text.split("\n")):
            yield text, self.position(i, 0)


def map_lines(text: str, span: Span, source: list[str]) -> ScriptText:
    """Find where each line of a scalar's value was written, within the scalar's own span."""
    start_line, start_col, end_line, _ = span
    quote = source[start_line - 1][start_col - 1 : start_col] if start_line <= len(source) else ""
    if quote in ("'", '"') and start_line == end_line and "\n" not in text:
        return ScriptText(text, ((start_line, start_col + 1),), _escapes(source[start_line - 1], start_col, quote))
    fallback = (start_line, start_col + (1 if quote in ("'", '"') else 0))
    starts: list[Pos] = []
    cursor, first_col = start_line, start_col - 1
    for content in text.split("\n"):
        stripped = content.lstrip()
        found: Pos | None = None
        if stripped:
            for n in range(cursor, min(end_line, len(source)) + 1):
                at = source[n - 1].find(stripped.rstrip(), first_col if n == start_line else 0)
                if at >= 0:
                    found = (n, at + 1 - (len(content) - len(stripped)))
                    cursor = n + 1
                    break
        starts.append(found or fallback)
    return ScriptText(text, tuple(starts))


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
            elif text.startswith(_SEPARATORS, j) and not text.startswith(("&>", "|&"), j):
                if current:
                    out.append(current)
                    current = []
                j += 2 if text.startswith(("&&", "||"), j) else 1
            else:
                word, k = _word(text, j)
                line, col = script.position(i, j)
                current.append(Token(word, line, col, col + (k - j)))
                j = k
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
        elif ch in " \t;|&":
            break
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


def command_program(words: list[Token], programs: frozenset[str]) -> int | None:
    """Index of the word that runs one of `programs`: the program itself, or the image of
    `docker run [options] IMAGE ...` whose last path segment (without tag) is the program."""
    at = program_index(words)
    if at is None:
        return None
    name = program_name(words[at].text)
    if name in programs:
        return at
    if name in _CONTAINER_RUNNERS and at + 1 < len(words) and words[at + 1].text == "run":
        for i in range(at + 2, len(words)):
            image = words[i].text.split("@", 1)[0].rsplit("/", 1)[-1].split(":", 1)[0]
            if not words[i].text.startswith("-") and image in programs:
                return i
    return None


def program_index(words: list[Token]) -> int | None:
    """Index of the program word: after `VAR=value` prefixes and wrappers like sudo/env."""
    wrappers = {"sudo", "env", "exec", "time", "nohup", "command", "eval"}
    for i, tok in enumerate(words):
        t = tok.text
        if "=" in t and t.split("=", 1)[0].isidentifier():
            continue
        if t in wrappers or (i > 0 and words[i - 1].text in ("sudo", "env") and t.startswith("-")):
            continue
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
