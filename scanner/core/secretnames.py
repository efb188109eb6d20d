"""Which names hold secrets and which values only point at one: the words `scanner.core.masks` reads.

A name holds a secret when a word of it says so (`token`, `password`, `secret`, `key` as a word of
`API_KEY`, …) unless it names a path, a setting about the secret (`…_expires_in`) or GitLab's Secret
Detection feature. A value is a reference — shown — when all it holds is variables, template
expressions, a command or code computing it, or a path; a default written beside a reference
(`${X:-v}`, `ENV.fetch('X', 'v')`, `|| 'v'`) is a literal, not a reference.
"""

from __future__ import annotations

import re

_STRONG = ("token", "password", "passwd", "secret", "credential", "authorization", "passphrase", "apikey",
           "accesskey", "accountkey", "privatekey", "api_key", "api-key", "access_key", "private_key", "bearer",
           "cookie", "gitlab_session", "signature", "sessionid", "session_id", "dsn", "webhook_url", "webhookurl")
_WEAK = frozenset({"pass", "pwd", "pw", "key", "keys", "auth", "creds", "sig", "pat", "psk", "otp", "hmac"})
# Names that end like a path or an id but hold the secret itself (Vault AppRole's `secret_id`).
_ALWAYS = frozenset({"secret_id", "secretid", "secret-id", "client_secret", "client-secret", "clientsecret",
                     "session_id", "sessionid", "session-id"})
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
# Settings that name a file or folder hold a path, not the secret (`incoming_email_secret_file`).
# So do settings that say how a secret is handled rather than what it is (`…_expires_in`, `…_version`),
# and the variables of GitLab's Secret Detection (`SECRET_DETECTION_EXCLUDED_PATHS`, `SECRETS_ANALYZER_VERSION`).
_PATH_NAME = re.compile(r"(?i)(?:file|path|paths|dir|directory|stdin|url|uri|name|type|id|version|image|tag|enabled|"
                        r"disabled|level|mode|timeout|from|to|ttl|expires_in|expiry|length|count|size|days|interval|"
                        r"format|algorithm|strategy|template|header|prefix|scopes?|_at)$")
_FEATURE = re.compile(r"(?i)secrets?[_-](?:detection|analyzer|push_protection|manager)")
_NOT_SECRET = frozenset({"true", "false", "nil", "null", "none", "~", "|", ">", "|-", ">-", "|+", ">+", "{", "[", ""})
# A default written beside a reference is a literal value: `${X:-v}`, `ENV.fetch('X', 'v')`, `|| 'v'`.
_DEFAULT = re.compile(r"\$\{\w{1,100}:?[-=?+]|\|\||\?\?|\b(?:fetch|getenv|get)\([^)\n]{0,200},|\bdefault\b")
# A command substitution that prints a literal (`$(echo -n u:pw | base64)`) is not a reference.
_REFERENCE = re.compile(
    r"\$\{[^}\n]{0,200}\}|\$\((?![^)\n]{0,200}\b(?:echo|printf)\b)[^)\n]{0,200}\)|\$[A-Za-z_]\w*"
    r"|\{\{[^}\n]{0,200}\}\}|<%[^%\n]{0,200}%>"
    r"|%[A-Za-z_]\w*%|#\{[^}\n]{0,200}\}|\{[A-Za-z_][\w.]{0,100}\}|`[^`\n]{0,200}`"
    r"|(?i:\b(?:bearer|basic|token|bot|digest)\b)"
)
# Code computing the value: an environment lookup, a Terraform reference, a call of a method
# (`requests.post(…).json()["token"]`; a credential-looking literal inside is still masked by form).
_CODE = re.compile(r"(?:ENV\b|os\.(?:environ|getenv)|process\.env|(?:var|local|data|module|each)\.\w"
                   r"|[a-z][a-z0-9_]*\.[a-z0-9_-]+\.[a-z0-9_]+$)")
_CALL = re.compile(r"[A-Za-z_][\w.]{0,100}\.[A-Za-z_]\w{0,60}\(")
_CHAIN = re.compile(r"(?:\.\w+|\[[^\]\n]{0,200}\]|\([^()\n]{0,200}\))*")


def _is_call(text: str) -> bool:
    """The whole value is a method call: `a.b(…)`, its parentheses closed, then only attributes,
    subscripts and further calls (`.json()["token"]`). `x.A(k7` or `a.B()k7` is a value, not code."""
    m = _CALL.match(text)
    if m is None:
        return False
    depth, i = 1, m.end()
    while i < len(text) and depth:
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
    return depth == 0 and _CHAIN.fullmatch(text, i) is not None


def is_secret_name(word: str) -> bool:
    lower = word.lower().strip("-.")
    if lower in _ALWAYS or lower.endswith(tuple("_" + a for a in _ALWAYS)):
        return True
    if (_PATH_NAME.search(lower) and not lower.endswith(("token", "key"))) or _FEATURE.search(lower):
        return False
    if any(s in lower for s in _STRONG):
        return True
    parts = re.split(r"[_.\-]+", _CAMEL.sub("_", word.strip("-.")))
    return any(p.lower() in _WEAK for p in parts)


def is_reference(value: str, string: bool = False) -> bool:
    """A reference to a secret, a command or template producing it, a path: not the secret.
    `string`: the content of a quoted string, never code."""
    text = value.strip()
    if text.lower() in _NOT_SECRET or (text.startswith("/") and not re.search(r"[\s'\":@]", text)):
        return True
    if len(text) > 400 or _DEFAULT.search(text):
        return False
    if _CODE.match(text) or (not string and _is_call(text)):
        return True
    return not re.search(r"[A-Za-z0-9]", _REFERENCE.sub("", text))
