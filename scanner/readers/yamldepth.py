"""YAML nesting, bounded before ruamel's C composer runs: that composer recurses in C once per level
and kills the whole process (SIGSEGV) at some 28,000 levels (`a: ` + `[` * 28000, `- ` * 28000).

Two steps. First a bound that costs two string counts and one regex search: a node is nested at
most as deep as the flow openers (`[`, `{`) in the whole text, plus twice the run of indentation and
block indicators (`-`, `?`, `:`, blanks) that starts its line, plus two — libyaml opens a block
collection only at a column past its parent's (a sequence under a mapping may share its column), and
a compact `- - x` spends two columns a level. Only when that bound passes a depth the composer
survives (ten times the limit; below it the converter reports the limit) is the event
stream read — libyaml's parser is a loop over an explicit stack, never a recursion — counting the
open collections exactly, so brackets in quotes, comments and block scalars never count.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ruamel.yaml import YAML
from ruamel.yaml.events import CollectionEndEvent, CollectionStartEvent, ScalarEvent

# Every line break YAML 1.1 knows (libyaml's), not only `\n`: after each, a line's run starts.
_BREAKS = ("\r", "\x85", "\u2028", "\u2029")
_RUN = "[-?: \t\ufeff]"


@lru_cache(maxsize=64)
def _run(width: int, any_break: bool) -> re.Pattern[str]:
    start = r"(?:^|[\r\x85\u2028\u2029])" if any_break else "^"
    return re.compile(f"{start}{_RUN}{{{width}}}", re.M)


def too_deep(text: str, parser: YAML, limit: int, safe: int) -> int | None:
    """The offset of the first node nested deeper than `limit`, if the bound passes `safe`
    (a depth the composer survives, past which the converter's own check stops it); else None.

    Depth counts as `yamldoc` counts it: the root is at 0, each collection adds one. If the text
    is invalid YAML before that point, None: the composer stops at the same error."""
    budget = safe - 2 - text.count("[") - text.count("{")
    if budget >= 0:
        any_break = any(b in text for b in _BREAKS)
        if not _run(budget // 2 + 1, any_break).search(text):
            return None
    return _first_too_deep(text, parser, limit)


def _first_too_deep(text: str, parser: YAML, limit: int) -> int | None:
    depth = 0
    try:
        for event in parser.parse(text):
            if isinstance(event, CollectionStartEvent | ScalarEvent) and depth > limit:
                return int(event.start_mark.index)
            if isinstance(event, CollectionStartEvent):
                depth += 1
            elif isinstance(event, CollectionEndEvent):
                depth -= 1
    except Exception:  # noqa: BLE001 - any failure to read is the composer's to report
        return None
    return None
