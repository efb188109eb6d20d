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
import unicodedata
from typing import TYPE_CHECKING, Any

from scanner.core.detectors import is_random
from scanner.core.masks import KEY_BLOCK, MASK, mask_spans

# A line that is only base64 (a PEM body line, a blob in YAML), indented or quoted.
_BASE64_LINE = re.compile(r"""[ \t'"]*([A-Za-z0-9+/]{1,200}={0,2})[ \t'",]*""")

if TYPE_CHECKING:
    from scanner.core.results import Finding, Location, Report

__all__ = ["MASK", "mask_spans", "masked_column", "redact", "redact_data", "redact_error", "redact_line",
           "redact_report", "visible", "visible_report"]


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
    """Any text, line by line (line ends kept); the lines of a private key block are masked whole,
    and so are the lines of a base64 block (a key or certificate body whose first line is not
    shown, as in a diff's context). `diff`: a unified diff, each line's text redacted after its
    `+`/`-`/` ` marker."""
    out: list[str] = []
    in_key = in_blob = False
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        header = not diff or body.startswith(("+++ ", "--- ", "@@", "\\"))
        mark, rest = ("", body) if header and not (in_key or in_blob) else (body[:1], body[1:])
        blob = _BASE64_LINE.fullmatch(rest)
        if in_key or (blob and (in_blob or (len(blob.group(1)) >= 40 and is_random(blob.group(1))))):
            in_key = in_key and "-----END" not in rest
            in_blob = bool(blob)
            out.append(mark + rest[: len(rest) - len(rest.lstrip())] + MASK + line[len(body) :])
            continue
        in_blob = False
        out.append(mark + redact_line(rest, prose) + line[len(body) :])
        in_key = bool(KEY_BLOCK.search(rest)) and "-----END" not in rest
    return "".join(out)


# A parser's message quoting the token it stumbled on (`Unexpected Name 'x7Fk…'`): a quoted word of
# 8 or more token characters mixing letters and digits is taken for a credential. A quoted path or
# address (`'$CI_SERVER_FQDN/group/project/scan@1.0'`) has other characters and stays.
_QUOTED_WORD = re.compile(r"""(['"`])(?=[\w+=~-]{0,200}[0-9])(?=[\w+=~-]{0,200}[A-Za-z])([\w+=~-]{8,200})\1""")


def redact_error(message: str, prose: bool = False) -> str:
    """An input error's message: redacted, and credential-looking quoted words masked. `prose`: a
    sentence sunset wrote around the values it quotes (`no token: set X`), read as `redact` reads one."""
    return _QUOTED_WORD.sub(lambda m: m.group(1) + MASK + m.group(1), redact(message, prose))


def _redact_location(loc: Location) -> Location:
    """The snippet and the symbolic path redacted, and where the finding's columns fall in the snippet
    (`Location.snippet_span`)."""
    first = loc.snippet.split("\n", 1)[0].rstrip("\r")
    loc = dataclasses.replace(loc, symbolic=redact_error(loc.symbolic))  # a key may be a secret, too
    if not mask_spans(first):
        return dataclasses.replace(loc, snippet=redact(loc.snippet))
    start = masked_column(first, loc.column - loc.snippet_offset)
    end = masked_column(first, loc.end_column - loc.snippet_offset) if loc.end_line == loc.line else 0
    if end and end <= start:  # the whole match was masked: point at the mask
        end = start + len(MASK)
    return dataclasses.replace(loc, snippet=redact(loc.snippet), snippet_column=start, snippet_end_column=end)


def redact_report(report: Report) -> Report:
    """A copy of the report with every string a format shows redacted (snippets, messages, matched
    values, input errors and warnings, include targets and notes). A finding's message is policy prose with the
    matched text filled in already redacted (`scanner.engine.findings`), so it is read as prose."""
    def finding(f: Finding) -> Finding:
        return dataclasses.replace(f, message=redact(f.message, prose=True), matched=redact(f.matched),
                                   location=_redact_location(f.location))

    findings = [finding(f) for f in report.findings]
    # An input error's path may be one the user typed (`sunset scan glpat-….yml`): said as its message is.
    errors = [dataclasses.replace(e, path=redact_error(e.path), message=redact_error(e.message)) for e in report.errors]
    warnings = [dataclasses.replace(w, path=redact_error(w.path), message=redact_error(w.message))
                for w in report.warnings]
    includes = [dataclasses.replace(i, target=redact(i.target), note=redact(i.note)) for i in report.includes]
    diff = report.diff and dataclasses.replace(report.diff, fixed=tuple(finding(f) for f in report.diff.fixed))
    return dataclasses.replace(report, findings=findings, errors=errors, warnings=warnings, includes=includes,
                               diff=diff)


def redact_data(value: Any) -> Any:
    """A copy of JSON-like data (a saved report read back) with every string redacted, keys too."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [redact_data(v) for v in value]
    if isinstance(value, dict):
        return {redact_data(k): redact_data(v) for k, v in value.items()}
    return value


def visible(text: str) -> str:
    """Control characters (C0, C1, DEL) and format characters (bidi overrides, zero-width, line and
    paragraph separators) from the scanned files shown as escapes (`\\x1b`, `\\u202e`), so they never
    reach a terminal, a merge-request widget or a browser raw (no ANSI codes, no bidi spoofing)."""
    if text.isprintable():
        return text
    return "".join(
        ch if ch == " " or unicodedata.category(ch) not in ("Cc", "Cf", "Zl", "Zp") else
        (f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}")
        for ch in text
    )


def visible_report(report: Report, snippets: bool = True) -> Report:
    """A copy of the report whose every shown string is `visible`: paths, messages, titles, input
    errors, includes, and (`snippets`) the source lines; for every format a person reads."""
    def loc(f: Finding) -> Location:
        shown = dataclasses.replace(f.location, path=visible(f.location.path))
        return dataclasses.replace(shown, snippet=visible(shown.snippet)) if snippets else shown

    def finding(f: Finding) -> Finding:
        return dataclasses.replace(f, message=visible(f.message), title=visible(f.title), matched=visible(f.matched),
                                   location=loc(f))

    findings = [finding(f) for f in report.findings]
    errors = [dataclasses.replace(e, path=visible(e.path), message=visible(e.message)) for e in report.errors]
    warnings = [dataclasses.replace(e, path=visible(e.path), message=visible(e.message)) for e in report.warnings]
    includes = [dataclasses.replace(i, source=visible(i.source), target=visible(i.target), note=visible(i.note))
                for i in report.includes]
    diff = report.diff and dataclasses.replace(report.diff, fixed=tuple(finding(f) for f in report.diff.fixed))
    return dataclasses.replace(report, findings=findings, errors=errors, warnings=warnings, includes=includes,
                               diff=diff)
