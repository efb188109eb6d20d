"""Where the secrets are in one line of text: the spans `scanner.core.redact` masks.

Values of secret-named keys whatever their quoting (`token: x`, `"password" => 'x'`, `PASS=x`,
`--password x`), URL userinfo, `-u user:pw`, GitLab token prefixes and private key blocks; each
character is read a bounded number of times (linear in the line). `$VARIABLES` and template
expressions are references, not secrets, and stay visible.
"""

from __future__ import annotations

import functools
import re

MASK = "****"

# GitLab's token formats: runner registration (GR1348941…), runner authentication (glrt-…),
# personal/project/group access (glpat-…), deploy (gldt-…) and the other gl…- prefixes.
_TOKEN = re.compile(
    r"(?<![A-Za-z0-9])(?:GR1348941[\w-]+|gl(?:rt|pat|dt|ptt|ft|agent|cbt|oas|imt|soat|ffct|rtr)-[\w-]{8,})"
)
KEY_BLOCK = re.compile(r"-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----")
_WORD = re.compile(r"[A-Za-z0-9_.-]+")
_STRONG = ("token", "password", "passwd", "secret", "credential", "authorization", "passphrase", "apikey",
           "accesskey", "accountkey", "privatekey", "api_key", "api-key", "access_key", "private_key")
_WEAK = frozenset({"pass", "pwd", "pw", "key", "keys", "auth", "creds"})
_USERPASS = frozenset({"-u", "--user", "-r"})
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
# Settings that name a file or folder hold a path, not the secret (`incoming_email_secret_file`).
_PATH_NAME = re.compile(r"(?i)(?:file|path|dir|directory|stdin|url|uri|name|type|id)$")
_SEP = re.compile(r"[ \t]*(=>|:=|[:=](?!=))[ \t]*")
_ENTRY = re.compile(r"['\"]?[ \t]*,[ \t]*['\"]?value['\"]?[ \t]*:[ \t]*")
_FLAG_SEP = re.compile(r"=|[ \t]*,[ \t]*|[ \t]+")
_QUOTES = "'\"`"
_NOT_SECRET = frozenset({"true", "false", "nil", "null", "none", "~", "|", ">", "|-", ">-", "|+", ">+", "{", "[", ""})
_REFERENCE = re.compile(
    r"\$\{[^}\n]{0,200}\}|\$\([^)\n]{0,200}\)|\$[A-Za-z_]\w*|\{\{[^}\n]{0,200}\}\}|<%[^%\n]{0,200}%>"
    r"|%[A-Za-z_]\w*%|#\{[^}\n]{0,200}\}|\{[A-Za-z_][\w.]{0,100}\}|`[^`\n]{0,200}`"
    r"|(?i:\b(?:bearer|basic|token|bot|digest)\b)"
)
_CODE = re.compile(r"(?:ENV\b|os\.(?:environ|getenv)|process\.env|(?:var|local|data|module|each)\.\w"
                   r"|[a-z][a-z0-9_]*\.[a-z0-9_-]+\.[a-z0-9_]+$)")
# `NAME=value` at a line's start (or a YAML list item's): the value runs to the end of the line (a
# compose `environment:` list, an env file), unless what follows its first word reads as a command
# line (`NAME=v cmd --flag`, `$VAR`, a pipe or `;`): then shell rules end it at the first blank.
_LINE_START = re.compile(r"[ \t]*(?:-[ \t]+)?(?:export[ \t]+)?")
_COMMAND_AFTER = re.compile(r"""[^\s'"`]*[ \t]+\S[^\n#]*?(?:[ \t]--?[A-Za-z]|\$|\||&&|;|>)""")
_ENV_PREFIX = re.compile(r"[ \t]*(?:ENV|ARG)[ \t]+", re.I)
_BARE_STOP = {
    "shell": re.compile(r"[\s'\"`&;|)<>,]"),
    "flow": re.compile(r",|[}\]]|[ \t]#"),
    "line": re.compile(r"[ \t]+#"),
    "url": re.compile(r"[\s'\"`<>]"),
}


def is_secret_name(word: str) -> bool:
    lower = word.lower().strip("-.")
    if _PATH_NAME.search(lower) and not lower.endswith(("token", "key")):
        return False
    if any(s in lower for s in _STRONG):
        return True
    parts = re.split(r"[_.\-]+", _CAMEL.sub("_", word.strip("-.")))
    return any(p.lower() in _WEAK for p in parts)


def is_reference(value: str) -> bool:
    """A reference to a secret, a command or template producing it, a path: not the secret."""
    text = value.strip()
    if text.lower() in _NOT_SECRET or (text.startswith("/") and not re.search(r"[\s'\":@]", text)):
        return True
    if len(text) > 400:
        return False
    return bool(_CODE.match(text)) or not re.search(r"[A-Za-z0-9]", _REFERENCE.sub("", text))


def _close(text: str, start: int, quote: str) -> int:
    """The index of the quote closing the string opened just before `start` (escapes and doubled
    quotes honoured); the line's length when it is not closed."""
    i, n = start, len(text)
    while i < n:
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == quote:
            if i + 1 < n and text[i + 1] == quote and quote != "`":
                i += 2
                continue
            return i
        i += 1
    return n


def _stop(text: str, start: int, how: str) -> int:
    m = _BARE_STOP[how].search(text, start)
    end = m.start() if m else len(text)
    while end > start and text[end - 1] in " \t":
        end -= 1
    return end


class _Masks:
    """The spans to mask in one line, and how far the scan has gone."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.spans: list[tuple[int, int]] = []

    def add(self, start: int, end: int, check: bool = True) -> None:
        if end > start and not (check and is_reference(self.text[start:end])):
            self.spans.append((start, end))

    def quoted(self, j: int) -> int:
        """A string starting at `j` (after an f/b/r prefix): its content masked; the index after it."""
        text = self.text
        while j < len(text) and text[j] in "fbrFBRuU" and j + 1 < len(text) and text[j + 1] in _QUOTES + "fbrFBR":
            j += 1
        end = _close(text, j + 1, text[j])
        self.add(j + 1, end)
        return end + 1

    def group(self, j: int) -> int:
        """`[...]`/`(...)` after a secret name: every string and bare word in it masked."""
        text, closer = self.text, {"[": "]", "(": ")", "{": "}"}[self.text[j]]
        j += 1
        while j < len(text) and text[j] != closer:
            if text[j] in " \t,":
                j += 1
            elif text[j] in _QUOTES or (text[j] in "fbr" and text[j + 1 : j + 2] in ('"', "'")):
                j = self.quoted(j)
            else:
                end = _stop(text, j, "shell")
                end = j + 1 if end == j else end
                self.add(j, min(end, text.find(closer, j) % (len(text) + 1)))
                j = end
        return j + 1

    def value(self, j: int, how: str, enclosing: str = "", userpass: bool = False) -> int:
        text = self.text
        if j >= len(text):
            return j
        ch = text[j]
        if userpass:
            end = _close(text, j + 1, ch) if ch in _QUOTES else _stop(text, j, "shell")
            colon = text.find(":", j, end)
            if colon >= 0:
                self.add(colon + 1, end)
            return end
        if ch in _QUOTES or (ch in "fbrFBRuU" and text[j + 1 : j + 2] in ("'", '"')):
            return self.quoted(j)
        if ch == "\\" and text[j + 1 : j + 2] in _QUOTES:  # `\"value\"` inside another string
            end = text.find(text[j : j + 2], j + 2)
            end = len(text) if end < 0 else end
            self.add(j + 2, end)
            return end + 2
        if ch in "[(" or (ch == "{" and how != "line"):
            return self.group(j)
        end = _close(text, j, enclosing) if enclosing else _stop(text, j, how)
        self.add(j, end)
        return end


def _named(masks: _Masks, m: re.Match[str], register: bool) -> int:
    """The value after a secret-named word (which `m` matched); the index to go on from."""
    text, s, e = masks.text, m.start(), m.end()
    word = m.group()
    enclosing = text[s - 1] if s and text[s - 1] in _QUOTES else ""
    i = e
    if enclosing and text[i : i + 1] == enclosing:
        i, enclosing = i + 1, ""  # the key itself was quoted
    if word.startswith("-"):
        if word in ("-u", "--user"):
            sep = _FLAG_SEP.match(text, i)
            return masks.value(sep.end(), "shell", userpass=True) if sep else e
        if word == "-r" and not register:
            return e
        sep = _FLAG_SEP.match(text, i)
        if sep is None or text.startswith("-", sep.end()):
            return e
        return masks.value(sep.end(), "shell", enclosing if sep.group() == "=" else "")
    if text[i : i + 1] == "]":
        i += 1
    entry = _ENTRY.match(text, i)
    sep = entry or _SEP.match(text, i)
    if sep is None:
        if _ENV_PREFIX.fullmatch(text, 0, s) and (gap := re.compile(r"[ \t]+").match(text, e)):
            return masks.value(gap.end(), "line")
        return e
    op = sep.group(1) if sep is not entry else ":"
    if op == ":" and not (sep.group().endswith((" ", "\t")) or sep.end() == len(text) or i > e
                          or text[sep.end() : sep.end() + 1] in _QUOTES):
        return e  # `image:tag`, `scheme:rest`: no YAML separator
    flow = any(c in text[:s] for c in "{[(")
    if op == "=" and not enclosing:
        how = "line" if _LINE_START.fullmatch(text, 0, s) and not _COMMAND_AFTER.match(text, sep.end()) else "shell"
    else:
        how = "flow" if flow else "line"
    return masks.value(sep.end(), how, enclosing)


def _urls(masks: _Masks) -> None:
    text, pos = masks.text, 0
    for m in re.finditer(r"://", text):
        if m.start() < pos:
            continue  # inside the URL already read: each character is read once
        pos = end = _stop(text, m.end(), "url")
        stop = re.compile(r"[/?#]").search(text, m.end(), end)
        auth_end = stop.start() if stop else end
        at = text.rfind("@", m.end(), auth_end)
        colon = text.find(":", m.end(), at) if at >= 0 else -1
        if colon >= 0:
            masks.add(colon + 1, at)


def _names(masks: _Masks) -> None:
    text = masks.text
    register = "register" in text
    pos = 0
    for m in _WORD.finditer(text):
        if m.start() < pos or not (m.group() in _USERPASS or is_secret_name(m.group())):
            continue
        pos = _named(masks, m, register)


@functools.lru_cache(maxsize=4096)
def mask_spans(text: str, prose: bool = False) -> tuple[tuple[int, int], ...]:
    """The (start, end) character spans of one line that `redact_line` replaces by `MASK`, in order
    and apart. `prose`: a sentence sunset wrote (a policy's message, whose `{match}` was redacted
    when it was filled in): only what is a secret whatever surrounds it (GitLab tokens, URL
    userinfo, key blocks), not `token: word` shapes."""
    if key := KEY_BLOCK.search(text):
        return ((key.start(), len(text)),)
    masks = _Masks(text)
    masks.spans.extend(m.span() for m in _TOKEN.finditer(text))
    _urls(masks)
    if not prose:
        _names(masks)
    out: list[tuple[int, int]] = []
    last = 0
    for start, end in sorted(masks.spans):
        if end <= last:
            continue
        out.append((max(start, last), end))
        last = end
    return tuple(out)


