"""What `sunset comment` needs to know of a GitLab server before talking to it: where the merge
request is (`Target`) and how long to wait when GitLab answers 429 or 5xx (`RetryPolicy`).
Light to import: python-gitlab is loaded only by `scanner.gitlab.notes`, when a note is posted.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import NamedTuple

# Safe to repeat: the request changed nothing, or repeating it changes nothing more.
IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})
RETRY_IDEMPOTENT = frozenset({429, 500, 502, 503, 504})
# A POST that failed with a 5xx may still have created the note; repeating it could post a second
# one. 429 is refused before any work is done, so only that is retried; the next pipeline finds
# and edits a note that did land.
RETRY_POST = frozenset({429})

class RetryPolicy(NamedTuple):
    """How often and how long to wait when GitLab answers 429 or 5xx."""

    retries: int = 5
    backoff: float = 1.0  # seconds before the first retry when GitLab gives no Retry-After; doubles
    max_wait: float = 120.0  # a longer Retry-After ends the retries rather than stalling the job
    sleep: Callable[[float], None] = time.sleep

    def statuses(self, method: str) -> frozenset[int]:
        return RETRY_IDEMPOTENT if method.upper() in IDEMPOTENT else RETRY_POST

    def delay(self, attempt: int, retry_after: str | None) -> float | None:
        """Seconds to wait before retry number `attempt` (0-based), or None to stop retrying."""
        if attempt >= self.retries:
            return None
        wait = retry_after_seconds(retry_after)
        if wait is None:
            wait = self.backoff * 2**attempt
        return wait if wait <= self.max_wait else None


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """`Retry-After` as seconds: delta-seconds or an HTTP date; None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    from email.utils import parsedate_to_datetime  # rare path; keeps `sunset scan` start-up lean

    try:
        when = parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when - (time.time() if now is None else now))


class Target(NamedTuple):
    url: str  # the server, without /api/v4
    project: str  # numeric id or full path
    mr: int


def unreachable(exc: BaseException, timeout: float) -> str | None:
    """Why a request never reached the server, in a few words, from the chain of exceptions requests and
    urllib3 raise (`ConnectionError(MaxRetryError(reason=NewConnectionError(…)))`); None when the
    server was reached."""
    import socket
    import ssl

    seen: set[int] = set()
    stack: list[BaseException] = [exc]
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        name = type(e).__name__
        if isinstance(e, socket.gaierror) or name == "NameResolutionError":
            return "the host name does not resolve"
        if isinstance(e, ConnectionRefusedError):
            return "connection refused (nothing listens on that port)"
        if isinstance(e, ssl.SSLCertVerificationError):
            return f"its TLS certificate is not trusted ({e.verify_message})"
        if isinstance(e, ssl.SSLError):
            return f"the TLS handshake failed ({e.reason or e})"
        if isinstance(e, TimeoutError) or name in ("ConnectTimeoutError", "ConnectTimeout"):
            return f"no answer within {timeout:g} s"
        if isinstance(e, OSError) and e.strerror and name not in ("NewConnectionError", "ProtocolError"):
            return e.strerror[0].lower() + e.strerror[1:]  # `network is unreachable`, `no route to host`
        stack += [c for c in (e.__cause__, e.__context__, getattr(e, "reason", None), *e.args)
                  if isinstance(c, BaseException)]
    return None
