"""Where the secrets are in one line of text: the spans `scanner.core.redact` masks.

Values of secret-named keys whatever their quoting (`token: x`, `"password" => 'x'`, `PASS=x`,
`--password x`), URL userinfo, `-u user:pw`, GitLab token prefixes and private key blocks; each
character is read a bounded number of times (linear in the line). `$VARIABLES` and template
expressions are references, not secrets, and stay visible.
"""

from __future__ import annotations

import functools
import re

from scanner.core.detectors import form_spans, random_spans
from scanner.core.secretnames import is_reference, is_secret_name

MASK = "****"

KEY_BLOCK = re.compile(r"-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----")
_WORD = re.compile(r"[A-Za-z0-9_.-]+")
# `-u user:pw`; `-r token` of `gitlab-runner register`; a client certificate and its password.
_FLAGS = frozenset({"-u", "--user", "-r", "--cert", "-E", "--proxy-user", "-p", "-w", "-a"})
# Header names written `NAME:value` without a blank (`PRIVATE-TOKEN:x`, httpie's `Authorization:x`).
_HEADER_WORDS = ("token", "authorization", "pass", "cookie", "bearer", "apikey", "api-key", "api_key")
_BLANKS = re.compile(r"[ \t]+")
_PLAIN_USER = re.compile(r"[a-z][a-z0-9._-]{0,31}")
_ECHOED = re.compile(r"\b(?:echo|printf)(?:[ \t]+-[A-Za-z]{1,3})*[ \t]+([^|\n]{1,2000}?)[ \t]*\|")
_HERE_STRING = re.compile(r"<<<[ \t]*")
# A password written after its name with only blanks between (`.netrc`, `# temp pw x`).
_BLANK_SEPARATED = frozenset({"password", "passwd", "pw", "passphrase"})
# `-p x` is a password for these commands (and `-px`, glued, for the MySQL clients).
_SHORT_FLAG_COMMANDS = {
    "-p": re.compile(r"\b(?:login|sshpass|mysql\w*|mariadb\w*|mongo\w*|htpasswd)\b"),
    "-w": re.compile(r"\bldap\w*"),
    "-a": re.compile(r"\bredis-cli\b"),
}
# `<tool> config set <secret name> <value>` (aws, npm, yarn, git config): a value after a blank.
_SETTER = re.compile(r"(?:\bset|\bconfig|--global|--local|--system)[ \t]+$")
# `key="Password" value="x"`, `name: token, value: x`: the name is the quoted word.
_NAMED_ENTRY = re.compile(r"""(['"])[A-Za-z0-9_.-]{1,100}\1""")
# After a reference to a secret, the literal used when it is unset: `ENV.fetch('X', 'v')`,
# `process.env.X || 'v'`, `os.getenv("X", "v")`, `ENV['X'] or 'v'`.
_FALLBACK = re.compile(r"""[^;\n]{0,200}?(?:\|\||\?\?|\bor\b)[ \t]*(['"])""")
_ARGUMENT = re.compile(r"""[ \t]*,[ \t]*(['"])""")
_GLUED_P = re.compile(r"\b(?:mysql\w*|mariadb\w*)\b")
_SEP = re.compile(r"[ \t]*(=>|:=|[:=](?!=))[ \t]*")
# `{name: 'password', value: 'x'}`; `<add key="Password" value="x" />`
_ENTRY = re.compile(r"['\"]?(?:[ \t]*,[ \t]*['\"]?value['\"]?[ \t]*:|[ \t]+value[ \t]*=)[ \t]*")
_FLAG_SEP = re.compile(r"=|[ \t]*,[ \t]*|[ \t]+")
_QUOTES = "'\"`"
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
    "header": re.compile(r"[\s'\"`<>@,;]"),
}


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

    def add(self, start: int, end: int, check: bool = True, string: bool = False) -> None:
        if end > start and not (check and is_reference(self.text[start:end], string)):
            self.spans.append((start, end))

    def quoted(self, j: int) -> int:
        """A string starting at `j` (after an f/b/r prefix): its content masked; the index after it."""
        text = self.text
        while j < len(text) and text[j] in "fbrFBRuU" and j + 1 < len(text) and text[j + 1] in _QUOTES + "fbrFBR":
            j += 1
        end = _close(text, j + 1, text[j])
        self.add(j + 1, end, string=True)
        while end + 1 < len(text) and text[end + 1] in _QUOTES:  # `'a'"b"`: one word to a shell
            j = end + 1
            end = _close(text, j + 1, text[j])
            self.add(j + 1, end, string=True)
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
    quoted_key = bool(enclosing) and text[i : i + 1] == enclosing
    if quoted_key:
        i, enclosing = i + 1, ""  # the key itself was quoted
    if word.startswith("-"):
        if word in ("-u", "--user", "--proxy-user", "--cert", "-E"):
            sep = _FLAG_SEP.match(text, i)
            if sep is None or (word == "-E" and "curl" not in text):
                return e
            return masks.value(sep.end(), "shell", userpass=True)
        command = _SHORT_FLAG_COMMANDS.get(word)
        if (word == "-r" and not register) or (command is not None and not command.search(text)):
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
        gap = _BLANKS.match(text, e)
        if gap and _ENV_PREFIX.fullmatch(text, 0, s):
            return masks.value(gap.end(), "line")
        if gap and not text.startswith("-", gap.end()) and (
                word.lower() in _BLANK_SEPARATED or _SETTER.search(text, max(0, s - 12), s)):
            return masks.value(gap.end(), "shell")
        if quoted_key and (argument := _ARGUMENT.match(text, i)):
            return masks.quoted(argument.start(1))  # `fetch('DB_PASSWORD', 'v')`
        return e
    op = sep.group(1) if sep is not entry else ":"
    named = _NAMED_ENTRY.match(text, sep.end())
    if named and word.lower() in ("key", "name") and is_secret_name(named.group()[1:-1]):
        return sep.end()  # the quoted name is read next, with its value
    if op == ":" and not (sep.group().endswith((" ", "\t")) or sep.end() == len(text) or i > e
                          or text[sep.end() : sep.end() + 1] in _QUOTES):
        # `PRIVATE-TOKEN:x` (a header without its blank); `image:tag`, `scheme:rest` are not values
        if enclosing or not any(h in word.lower() for h in _HEADER_WORDS):
            return masks.value(sep.end(), "line", enclosing) if enclosing and _is_header(word) else e
        return masks.value(sep.end(), "header")
    flow = any(c in text[:s] for c in "{[(")
    if op == "=" and not enclosing:
        how = "line" if _LINE_START.fullmatch(text, 0, s) and not _COMMAND_AFTER.match(text, sep.end()) else "shell"
    else:
        how = "flow" if flow else "line"
    end = masks.value(sep.end(), how, enclosing)
    if is_reference(text[sep.end() : end]) and (fallback := _FALLBACK.match(text, end)):
        return masks.quoted(fallback.start(1))  # `process.env.PW || 'v'`: the literal used when unset
    return end


def _is_header(word: str) -> bool:
    return any(h in word.lower() for h in _HEADER_WORDS)


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
        elif at >= 0 and not _PLAIN_USER.fullmatch(text, m.end(), at):
            masks.add(m.end(), at)  # a token given as the user name (a Sentry DSN, `https://<token>@`)


def _names(masks: _Masks) -> None:
    text = masks.text
    register = "register" in text
    glued = _GLUED_P.search(text) is not None
    pos = 0
    for m in _WORD.finditer(text):
        word = m.group()
        if m.start() < pos:
            continue
        if glued and word.startswith("-p") and len(word) > 2 and word[2] != "-":
            pos = masks.value(m.start() + 2, "shell")  # `mysql -pSECRET`
        elif word in _FLAGS or is_secret_name(word):
            pos = _named(masks, m, register)


def _piped(masks: _Masks) -> None:
    """What `echo`/`printf` or a here-string feeds a command reading a password from its input."""
    text = masks.text
    if "-stdin" not in text:
        return
    for m in _ECHOED.finditer(text):
        masks.add(m.start(1), m.end(1))
    for m in _HERE_STRING.finditer(text):
        masks.value(m.end(), "shell")


@functools.lru_cache(maxsize=4096)
def mask_spans(text: str, prose: bool = False) -> tuple[tuple[int, int], ...]:
    """The (start, end) character spans of one line that `redact_line` replaces by `MASK`, in order
    and apart. `prose`: a sentence sunset wrote (a policy's message, whose `{match}` was redacted
    when it was filled in): only what is a secret whatever surrounds it (GitLab tokens, URL
    userinfo, key blocks), not `token: word` shapes."""
    if key := KEY_BLOCK.search(text):
        return ((key.start(), len(text)),)
    masks = _Masks(text)
    masks.spans.extend(form_spans(text))
    masks.spans.extend(random_spans(text))
    _urls(masks)
    if not prose:
        _names(masks)
        _piped(masks)
    out: list[tuple[int, int]] = []
    for start, end in sorted(masks.spans):
        if out and start <= out[-1][1]:  # overlapping or touching: one mask
            out[-1] = (out[-1][0], max(end, out[-1][1]))
        else:
            out.append((start, end))
    return tuple(out)


