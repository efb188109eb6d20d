"""Positions inside Python source: character columns for AST nodes (whose offsets count UTF-8
bytes) and the position of every character of a string literal, escapes included."""

from __future__ import annotations

import ast

from scanner.readers.api.model import Pos

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b",
            "f": "\f", "v": "\v", "0": "\0"}


class Source:
    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()

    def col(self, line: int, byte_offset: int) -> int:
        """1-based character column of a UTF-8 byte offset on a 1-based line."""
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        return len(text.encode()[:byte_offset].decode(errors="ignore")) + 1

    def start(self, node: ast.AST) -> Pos:
        line = int(getattr(node, "lineno", 1) or 1)
        return line, self.col(line, int(getattr(node, "col_offset", 0) or 0))

    def end(self, node: ast.AST) -> Pos:
        line = int(getattr(node, "end_lineno", None) or getattr(node, "lineno", 1) or 1)
        return line, self.col(line, int(getattr(node, "end_col_offset", 0) or 0))

    def string_positions(self, node: ast.Constant) -> tuple[Pos, ...] | None:
        """The position of each character of a single string literal; None if the literal is
        an implicit concatenation or cannot be read back exactly."""
        line, col = self.start(node)
        row, j = line - 1, col - 1
        text = self.lines[row] if row < len(self.lines) else ""
        while j < len(text) and text[j].isalpha():
            j += 1
        prefix = text[col - 1 : j].lower()
        if "f" in prefix or "b" in prefix or j >= len(text) or text[j] not in "'\"":
            return None
        quote = text[j : j + 3] if text[j : j + 3] in ('"""', "'''") else text[j]
        j += len(quote)
        out: list[str] = []
        pos: list[Pos] = []
        while row < len(self.lines):
            text = self.lines[row]
            while j < len(text):
                if text.startswith(quote, j):
                    return tuple(pos) if "".join(out) == node.value else None
                ch = text[j]
                if ch == "\\" and "r" not in prefix:
                    if j + 1 >= len(text):
                        j += 1
                        continue  # backslash-newline: a line continuation inside the literal
                    out.append(_ESCAPES.get(text[j + 1], text[j + 1]))
                    pos.append((row + 1, j + 1))
                    j += 2
                    continue
                out.append(ch)
                pos.append((row + 1, j + 1))
                j += 1
            if len(quote) == 1 and not text.endswith("\\"):
                return None
            if len(quote) == 3:
                out.append("\n")
                pos.append((row + 1, len(text) + 1))
            row, j = row + 1, 0
        return None
