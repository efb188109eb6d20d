"""Secrets never leave sunset: snippets and matched values are redacted before any output.

Redaction happens once, where a `Location` snippet or a finding's matched text is built,
so every formatter (text, JSON, SARIF, Code Quality, Markdown) gets the redacted form.
"""

from __future__ import annotations

import functools
import re

MASK = "****"

# Token formats GitLab documents: runner registration (GR1348941…), runner authentication
# (glrt-…), personal/project/group access (glpat-…), deploy (gldt-…), and others gl…-.
_TOKEN = re.compile(r"\b(GR1348941[\w-]+|gl(?:rt|pat|dt|ptt|ft|agent|cbt|oas|imt|soat|ffct|rtr)-[\w-]{8,})")
# A value given to a secret-looking flag (`--registration-token X`, `-r X`, `--token=X`) or
# assigned to a secret-looking name (`REGISTRATION_TOKEN=X`, `password: X`, `PRIVATE-TOKEN: X`,
# `'Authorization' => ["Bearer X"]`, `'accesskey' => 'X'` in settings files). A quoted value is
# masked whole, spaces included.
_SECRET = (
    r"[A-Za-z0-9_.-]*(?:token|password|passwd|secret|api[_-]?key|authorization|access_?key|account_?key"
    r"|private_?key|key_base|credential)[A-Za-z0-9_.-]*"
)
_VALUE = r"(?:(?P<q>['\"])(?P<qv>[^'\"\n]*)(?P=q)|(?P<bv>[^\s'\",;}\]]+))"
# `--token X`, `--token=X`, and exec-form lists: `"--token", "X"` (Dockerfile, compose, Kubernetes).
_FLAG = re.compile(rf"(?i)(?<![\w-])(?P<name>--?{_SECRET}|-r)(?P<sep>=|\s+|['\"]\s*,\s*){_VALUE}")
_ASSIGN = re.compile(rf"(?i)(?P<name>{_SECRET})(?P<sep>['\"]?\]?\s*(?:=>|[:=])\s*\[?\s*){_VALUE}")
# Dockerfile's legacy `ENV NAME value`, where the value runs to the end of the line.
_ENV_SPACE = re.compile(rf"(?i)^(?P<name>\s*(?:ENV|ARG)\s+{_SECRET})(?P<sep>\s+)(?P<bv>[^=\s].*)$")
# A Kubernetes-style `{name: API_TOKEN, value: X}` written on one line.
_ENV_ENTRY = re.compile(rf"(?i)(?P<name>name:\s*['\"]?{_SECRET}['\"]?\s*,\s*value)(?P<sep>:\s*){_VALUE}")
_VARIABLE = re.compile(r"^\$\{?[A-Za-z_][A-Za-z0-9_]*\}?$|^%[A-Za-z_][A-Za-z0-9_]*%$")
# Settings that name a file or folder hold a path, not the secret (`incoming_email_secret_file`).
_PATH_NAME = re.compile(r"(?i)(?:file|path|dir|directory)['\"]?$")


_NOT_SECRET = frozenset({"true", "false", "nil", "null", "~", "|", ">", "{", "[", ""})


def _mask_assignment(m: re.Match[str]) -> str:
    value = m.group("qv") if m.groupdict().get("qv") is not None else m.group("bv")
    if _VARIABLE.match(value) or value.startswith(("-", "/")) or value in _NOT_SECRET:
        return m.group(0)  # a reference to a secret is not the secret
    if any(ref in value for ref in ("$(", "${", "<%", "{{", "$CI_", "`")):
        return m.group(0)  # a command or template that produces it, not the secret
    if _PATH_NAME.search(m.group("name")):
        return m.group(0)
    quote = m.groupdict().get("q") or ""
    return f"{m.group('name')}{m.group('sep')}{quote}{MASK}{quote}"


def _mask_unless_short_r(m: re.Match[str]) -> str:
    return m.group(0) if m.group("name") == "-r" else _mask_assignment(m)


@functools.lru_cache(maxsize=4096)
def redact_line(text: str) -> str:
    """Mask token-like and password-like values in one line of source (a line with several findings
    is masked once)."""
    text = _TOKEN.sub(MASK, text)
    # `-r` is a registration token only for `gitlab-runner register` (`jq -r`, `cp -r` are not)
    flag = _mask_assignment if "register" in text else _mask_unless_short_r
    text = _FLAG.sub(flag, text)
    text = _ENV_SPACE.sub(_mask_assignment, text)
    text = _ENV_ENTRY.sub(_mask_assignment, text)
    return _ASSIGN.sub(_mask_assignment, text)
