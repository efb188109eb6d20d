"""The one line model: where lines end in a file's text, for every reader and every finding.

A line ends at LF, CRLF or a lone CR — what YAML, shells, Ruby, Python and JavaScript treat as line
ends — and nowhere else: form feed, vertical tab, NEL (U+0085) and the Unicode line and paragraph
separators (U+2028, U+2029), which `str.splitlines()` also splits at, are characters inside a line.
`LineIndex` is built once per text (one pass) and turns a character offset into a 1-based line and
column by bisection, so locating every match of a pattern is linear in the text, not quadratic.
"""

from __future__ import annotations

import bisect
import re

_END = re.compile(r"\r\n|\r|\n")
_LONE_CR = re.compile(r"\r(?!\n)")


def lf_line_ends(text: str) -> str:
    """`text` with each lone CR (a line end of this model) written as LF, for a reader that splits
    lines at LF only: every character keeps its offset, and every line its number. CRLF stays."""
    return _LONE_CR.sub("\n", text) if "\r" in text else text


def split_lines(text: str) -> list[str]:
    """The lines of `text`, without their ends (a final line end starts no extra line)."""
    lines = _END.split(text)
    if lines[-1] == "":  # a final line end (or no text at all) starts no line
        lines.pop()
    return lines


class LineIndex:
    """The offset at which each line of a text starts."""

    __slots__ = ("starts",)

    def __init__(self, text: str) -> None:
        self.starts = [0, *(m.end() for m in _END.finditer(text))]

    def position(self, offset: int) -> tuple[int, int]:
        """1-based line and column of the character at `offset`."""
        line = bisect.bisect_right(self.starts, offset)
        return line, offset - self.starts[line - 1] + 1

    def line_start(self, offset: int) -> int:
        """The offset where the line holding `offset` starts."""
        return self.starts[bisect.bisect_right(self.starts, offset) - 1]
