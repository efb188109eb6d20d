"""TOML scalars (numbers, dates, escapes) and the nesting limit of `scanner.readers.settings.toml`."""

from __future__ import annotations

import re

NUMBER = re.compile(
    r"[+-]?(?:0x[0-9A-Fa-f_]+|0o[0-7_]+|0b[01_]+|inf|nan"
    r"|(?:0|[1-9][0-9_]*)(?:\.[0-9_]+)?(?:[eE][+-]?[0-9_]+)?)"
)
DATE = re.compile(
    r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})?)?|\d{2}:\d{2}:\d{2}(?:\.\d+)?"
)
ESC = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "\\": "\\", "e": "\x1b"}
MAX_DEPTH = 100  # as deep as a YAML document may nest (scanner.readers.yamldoc)


def number(text: str) -> int | float:
    clean = text.replace("_", "")
    body = clean.lstrip("+-")
    if body in ("inf", "nan"):
        return float(clean)
    if body[:2] in ("0x", "0o", "0b"):
        value = int(body, 0)
        return -value if clean.startswith("-") else value
    if any(c in body for c in ".eE"):
        return float(clean)
    return int(clean)
