"""Secrets never leave sunset: snippets and matched values are redacted before any output.

Redaction happens once, where a `Location` snippet or a finding's matched text is built,
so every formatter (text, JSON, SARIF, Code Quality, Markdown) gets the redacted form.
"""

from __future__ import annotations

import re

MASK = "****"

# Token formats GitLab documents: runner registration (GR1348941…), runner authentication
# (glrt-…), personal/project/group access (glpat-…), deploy (gldt-…), and others gl…-.
_TOKEN = re.compile(r"\b(GR1348941[\w-]+|gl(?:rt|pat|dt|ptt|ft|agent|cbt|oas|imt|soat|ffct|rtr)-[\w-]{8,})")
# A value given to a secret-looking flag (`--registration-token X`, `-r X`, `--token=X`) or
# assigned to a secret-looking name (`REGISTRATION_TOKEN=X`, `password: X`, `PRIVATE-TOKEN: X`).
_SECRET = r"[A-Za-z0-9_.-]*(?:token|password|passwd|secret|api[_-]?key)[A-Za-z0-9_.-]*"
_FLAG = re.compile(
    rf"(?i)(?<![\w-])(?P<name>--?{_SECRET}|-r)(?P<sep>=|\s+)(?P<q>['\"]?)(?P<value>[^\s'\"]+)(?P=q)"
)
_ASSIGN = re.compile(
    rf"(?i)(?P<name>{_SECRET})(?P<sep>['\"]?\]?\s*(?:=>|[:=])\s*)(?P<q>['\"]?)(?P<value>[^\s'\"]+)(?P=q)"
)
_VARIABLE = re.compile(r"^\$\{?[A-Za-z_][A-Za-z0-9_]*\}?$|^%[A-Za-z_][A-Za-z0-9_]*%$")


_NOT_SECRET = frozenset({"true", "false", "nil", "null", "~", "|", ">", "{", "["})


def _mask_assignment(m: re.Match[str]) -> str:
    value = m.group("value")
    if _VARIABLE.match(value) or value.startswith(("-", "<%", "/", "{{")) or value in _NOT_SECRET:
        return m.group(0)  # a reference to a secret is not the secret
    return f"{m.group('name')}{m.group('sep')}{m.group('q')}{MASK}{m.group('q')}"


def redact_line(text: str) -> str:
    """Mask token-like and password-like values in one line of source."""
    text = _TOKEN.sub(MASK, text)
    text = _FLAG.sub(_mask_assignment, text)
    return _ASSIGN.sub(_mask_assignment, text)
