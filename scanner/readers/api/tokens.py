"""The token the script lexers produce (`scanner.readers.api.jslex` for JavaScript/TypeScript,
`scanner.readers.api.rubylex` for Ruby scripts), and the scanning step they share.

A literal's token carries the source offset of each character of its value, so a path or a
GraphQL field found inside it is placed exactly, whatever escapes or interpolations it holds.

The Omnibus `gitlab.rb` reader has its own lexer and token (`scanner.readers.settings.ruby`):
it reads a settings file as statements and values, so its tokens carry line/column spans and
the source text, keep `#{…}` as written, read strings across lines, skip heredoc bodies and
report unterminated literals as warnings; a Ruby API script needs none of that, but needs each
character's offset and heredoc bodies read. One token for both would make every token of
either lexer carry fields it never uses.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class Tok:
    kind: str  # str | id | p (punctuation) | num
    start: int
    end: int
    value: str
    offsets: list[int] = field(default_factory=list)  # for literals: source offset of each value char
    exprs: list[str] = field(default_factory=list)  # for interpolations: the text of each ${...} / #{...}


def interpolation_end(text: str, j: int) -> int:
    """Index after the `}` closing the `${` or `#{` at `j` (braces counted, strings not read);
    the end of the text when it is never closed."""
    depth, k = 1, j + 2
    while k < len(text) and depth:
        depth += {"{": 1, "}": -1}.get(text[k], 0)
        k += 1
    return k
