"""Secrets never leave sunset: every output format renders through this one redactor.

`redact_line` masks whole values, whatever their quoting: values of secret-named keys (assignments,
YAML/TOML/Ruby hashes, env lines, `--flag=x`/`--flag x`, exec-form lists), userinfo in URLs,
header values (`Authorization: Bearer x`, `PRIVATE-TOKEN: x`), `-u user:pw`, GitLab tokens by
prefix, private key blocks. References (`$VAR`, `${VAR}`, `{{ }}`, `<%= %>`, `ENV[...]`) stay.
It is one pass over the line: words are found once, each value is scanned once from its start
(the closing quote found honouring backslash escapes and doubled quotes), so it is linear in the
line's length. `redact_report` applies it to every string a report shows (`scanner.report.formats`).
"""

from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING

from scanner.core.masks import KEY_BLOCK, MASK, mask_spans

if TYPE_CHECKING:
    from scanner.core.results import Location, Report

__all__ = ["MASK", "mask_spans", "masked_column", "redact", "redact_error", "redact_line", "redact_report"]


def redact_line(text: str, prose: bool = False) -> str:
    """One line with every secret value replaced by `MASK`."""
    out, last = [], 0
    for start, end in mask_spans(text, prose):
        out += [text[last:start], MASK]
        last = end
    out.append(text[last:])
    return "".join(out)


def masked_column(text: str, column: int) -> int:
    """A 1-based column of `text` as a column of `redact_line(text)`: after each mask before it,
    shifted by the length it changed; inside a mask, the mask's first column."""
    shift = 0
    for start, end in mask_spans(text):
        if start >= column - 1:
            break
        if end > column - 1:
            return start + 1 - shift
        shift += (end - start) - len(MASK)
    return column - shift


def redact(text: str, prose: bool = False, diff: bool = False) -> str:
    """Any text, line by line (line ends kept); the lines of a private key block are masked whole.
    `diff`: a unified diff, each line's text redacted after its `+`/`-`/` ` marker."""
    out: list[str] = []
    in_key = False
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        header = not diff or body.startswith(("+++ ", "--- ", "@@", "\\"))
        mark, rest = ("", body) if header and not in_key else (body[:1], body[1:])
        if in_key:
            in_key = "-----END" not in rest
            out.append(mark + MASK + line[len(body) :])
            continue
        out.append(mark + redact_line(rest, prose) + line[len(body) :])
        in_key = bool(KEY_BLOCK.search(rest)) and "-----END" not in rest
    return "".join(out)


# A parser's message quoting the token it stumbled on (`Unexpected Name 'x7Fk…'`): a quoted word of
# 8 or more characters mixing letters and digits is taken for a credential.
_QUOTED_WORD = re.compile(r"""(['"`])(?=[^'"`\s]{0,200}[0-9])(?=[^'"`\s]{0,200}[A-Za-z])([^'"`\s]{8,200})\1""")


def redact_error(message: str) -> str:
    """An input error's message: redacted, and credential-looking quoted words masked."""
    return _QUOTED_WORD.sub(lambda m: m.group(1) + MASK + m.group(1), redact(message))


def _redact_location(loc: Location) -> Location:
    """The snippet redacted, and where the finding's columns fall in it (`Location.snippet_span`)."""
    first = loc.snippet.split("\n", 1)[0].rstrip("\r")
    if not mask_spans(first):
        return dataclasses.replace(loc, snippet=redact(loc.snippet))
    start = masked_column(first, loc.column)
    end = masked_column(first, loc.end_column) if loc.end_line == loc.line else 0
    if end and end <= start:  # the whole match was masked: point at the mask
        end = start + len(MASK)
    return dataclasses.replace(loc, snippet=redact(loc.snippet), snippet_column=start, snippet_end_column=end)


def redact_report(report: Report) -> Report:
    """A copy of the report with every string a format shows redacted (snippets, messages, matched
    values, input errors, include targets and notes). A finding's message is policy prose with the
    matched text filled in already redacted (`scanner.engine.findings`), so it is read as prose."""
    findings = [
        dataclasses.replace(
            f,
            message=redact(f.message, prose=True),
            matched=redact(f.matched),
            location=_redact_location(f.location),
        )
        for f in report.findings
    ]
    errors = [dataclasses.replace(e, message=redact_error(e.message)) for e in report.errors]
    includes = [dataclasses.replace(i, target=redact(i.target), note=redact(i.note)) for i in report.includes]
    return dataclasses.replace(report, findings=findings, errors=errors, includes=includes)
