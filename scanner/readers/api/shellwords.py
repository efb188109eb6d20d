"""Shell words with the source position of every character, for findings inside a word.

`scanner.readers.shell` tokenises a script line by line, which is all the command matchers need. An
API call needs more: the column of `active` inside `--form "active=false"`, and GraphQL
queries quoted across several lines. `word_chars` re-reads one word from the script text
following bash's quoting rules and maps each character of its value back to the file.
"""

from __future__ import annotations

import json
import re

from scanner.core.document import Document
from scanner.core.tree import Span
from scanner.readers.api.model import Pos
from scanner.readers.shell import ScriptText, Token

Chars = tuple[str, tuple[Pos, ...]]  # a word's value and the position of each character


def _locate(script: ScriptText, tok: Token) -> tuple[int, int] | None:
    """The script line index and offset where `tok` starts."""
    if script.folds:
        return script.locate(tok.line, tok.column)
    lines = script.text.split("\n")
    for i, (line, col) in enumerate(script.line_starts[: len(lines)]):
        j = tok.column - col
        if line == tok.line and 0 <= j < len(lines[i]):
            return i, j
    return None


def word_chars(script: ScriptText, tok: Token) -> Chars:
    """The value of the word starting at `tok`, quotes removed, newlines inside quotes kept."""
    where = _locate(script, tok)
    if where is None:  # positions unknown: assume the word is written as its value
        return tok.text, tuple((tok.line, tok.column + k) for k in range(len(tok.text)))
    lines = script.text.split("\n")
    kept = _kept(lines, *where)  # (line index, offset) of each character of the value
    text = "".join(lines[i][j] if j < len(lines[i]) else "\n" for i, j in kept)
    return text, tuple(script.position(i, j) for i, j in kept)


def _kept(lines: list[str], i: int, j: int) -> list[tuple[int, int]]:
    """Where the characters of the word starting at line `i`, offset `j`, are: bash's quoting
    rules; a newline inside quotes is kept at the end of its line."""
    kept: list[tuple[int, int]] = []
    quote = ""
    while i < len(lines):
        line = lines[i]
        while j < len(line):
            ch = line[j]
            if quote and ch == quote:
                quote = ""
            elif quote == '"' and ch == "\\" and j + 1 < len(line) and line[j + 1] in '"\\$`':
                j += 1
                kept.append((i, j))
            elif quote:
                kept.append((i, j))
            elif ch in "'\"":
                quote = ch
            elif ch in " \t;|&<>":
                return kept
            elif ch == "\\" and j + 1 < len(line):
                j += 1
                kept.append((i, j))
            elif ch != "\\":
                kept.append((i, j))
            j += 1
        if not quote:
            break
        kept.append((i, len(line)))
        i, j = i + 1, 0
    return kept


def span_in(chars: Chars, offset: int, length: int) -> Span:
    positions = chars[1]
    if not positions:
        return (1, 1, 1, 1)
    line, col = positions[min(offset, len(positions) - 1)]
    return (line, col, line, col + length)


def piped(doc: Document, a: Token, b: Token) -> bool:
    """Is the source text between the end of word `a` and the start of word `b` a single `|`?"""
    if b.line < a.line or (b.line == a.line and b.column < a.end_column):
        return False
    if a.line == b.line:
        between = doc.line_text(a.line)[a.end_column - 1 : b.column - 1]
    else:
        middle = "".join(doc.line_text(n) for n in range(a.line + 1, b.line))
        between = doc.line_text(a.line)[a.end_column - 1 :] + middle + doc.line_text(b.line)[: b.column - 1]
    return between.replace("\\", " ").strip() == "|"


_JSON_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def json_string_value(text: str, key: str) -> tuple[str, list[int]] | None:
    """The string value of top-level-looking `"key": "..."` in JSON `text`, with the index in
    `text` of each character of the decoded value."""
    m = re.search(rf'"{re.escape(key)}"\s*:\s*"', text)
    if m is None:
        return None
    out: list[str] = []
    idx: list[int] = []
    i = m.end()
    while i < len(text) and text[i] != '"':
        if text[i] == "\\" and i + 1 < len(text):
            esc = text[i + 1]
            if esc == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", text[i + 2 : i + 6]):
                out.append(chr(int(text[i + 2 : i + 6], 16)))
                idx.append(i)
                i += 6
                continue
            out.append(_JSON_ESCAPES.get(esc, esc))
            idx.append(i)
            i += 2
            continue
        out.append(text[i])
        idx.append(i)
        i += 1
    return "".join(out), idx


def json_object(text: str) -> dict[str, object] | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def json_key_offset(text: str, key: str) -> int:
    m = re.search(rf'"{re.escape(key)}"\s*:', text)
    return m.start() + 1 if m else 0
