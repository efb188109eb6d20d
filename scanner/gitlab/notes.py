"""The GitLab side of `sunset comment`: find sunset's own note on a merge request, edit it or create it.

Imported only when `sunset comment` runs (it loads python-gitlab and requests).

Our note is the first note, oldest first, that both carries `MARKER` and was written by the
token's user (`GET /user`); a note by anyone else is never edited, even one that quotes the
marker. The list follows GitLab's pagination to the end if it must (`iterator=True`), since a busy
merge request has hundreds of notes.

Retries: python-gitlab retries 429 (honouring a numeric `Retry-After`) and, when asked, 5xx, but
its backoff cannot be tuned, it waits however long `Retry-After` says, and it fails on the
HTTP-date form. So its retries are switched off and a response hook on the requests session
retries instead, following `RetryPolicy` (numeric or date `Retry-After`, a cap, no POST repeats
after a 5xx).

Redirects: requests drops `Authorization` when a redirect changes host, but not GitLab's own
`PRIVATE-TOKEN` or `JOB-TOKEN`, and it keeps them on another port. `_Session` sends none of them
to another origin (scheme, host and port): the token stays with the server CI named.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

import gitlab
import requests
from gitlab.exceptions import GitlabError
from gitlab.v4.objects import ProjectMergeRequest, ProjectMergeRequestNote

from scanner import __version__
from scanner.gitlab.retry import RetryPolicy, Target
from scanner.report.markdown import MARKER

__all__ = ["GitlabError", "describe", "publish"]

TIMEOUT = 30.0  # seconds per request
CREDENTIAL_HEADERS = ("PRIVATE-TOKEN", "JOB-TOKEN", "Authorization")
_DEFAULT_PORTS = {"http": 80, "https": 443}
PER_PAGE = 100  # GitLab's maximum page size

log = logging.getLogger("sunset.comment")


class _Stderr(logging.Handler):
    """`--verbose`: to whatever `sys.stderr` is at the time (a captured stream in tests)."""

    def emit(self, record: logging.LogRecord) -> None:
        from scanner.core.redact import redact_error  # a URL or an answer quoted back may hold a secret

        sys.stderr.write(f"sunset: {record.name}: {redact_error(record.getMessage())}\n")


@contextmanager
def verbose(on: bool = True) -> Iterator[None]:
    """Log sunset's retries and urllib3's request lines (method, URL, status; never headers) while
    the block runs; the loggers are as they were afterwards, so a later call in the same process (an
    embedding program, the tests) is not verbose unless it asks."""
    if not on:
        yield
        return
    saved = [(logger, logger.level, list(logger.handlers)) for logger in map(logging.getLogger, ("sunset", "urllib3"))]
    for logger, _, _ in saved:
        logger.setLevel(logging.DEBUG)
        logger.addHandler(_Stderr())
    try:
        yield
    finally:
        for logger, level, handlers in saved:
            logger.setLevel(level)
            logger.handlers[:] = handlers


class _Client(gitlab.Gitlab):
    """python-gitlab with its own retries off; the session's hook retries (see module docstring)."""

    def http_request(self, verb: str, path: str, *args: Any, **kwargs: Any) -> requests.Response:
        kwargs.update(obey_rate_limit=False, retry_transient_errors=False, max_retries=0)
        return super().http_request(verb, path, *args, **kwargs)


def origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or _DEFAULT_PORTS.get(scheme)


class _Session(requests.Session):
    """A session that never carries credentials across a redirect to another origin."""

    def rebuild_auth(self, prepared_request: requests.PreparedRequest, response: requests.Response) -> None:
        super().rebuild_auth(prepared_request, response)
        if origin(str(prepared_request.url)) != origin(str(response.request.url)):
            dropped = [h for h in CREDENTIAL_HEADERS if prepared_request.headers.pop(h, None) is not None]
            if dropped:
                log.debug("redirect to another origin (%s); %s not sent", urlsplit(str(prepared_request.url)).netloc,
                          ", ".join(dropped))


def _retry_hook(policy: RetryPolicy) -> Any:
    def hook(response: requests.Response, *args: Any, **kwargs: Any) -> requests.Response:
        attempt = 0
        method = str(response.request.method)
        while response.status_code in policy.statuses(method):
            wait = policy.delay(attempt, response.headers.get("Retry-After"))
            if wait is None:
                break
            attempt += 1
            log.debug("%s %s: HTTP %s; retry %d in %.1fs", method, response.request.path_url,
                      response.status_code, attempt, wait)
            policy.sleep(wait)
            response.close()
            response = response.connection.send(response.request, **kwargs)
        return response

    return hook


def connect(target: Target, token: str, policy: RetryPolicy) -> gitlab.Gitlab:
    session = _Session()
    session.hooks["response"].append(_retry_hook(policy))
    return _Client(
        target.url,
        private_token=token,
        session=session,
        timeout=TIMEOUT,
        user_agent=f"sunset/{__version__}",
        keep_base_url=True,  # pagination links may name GitLab's external URL; stay on the one CI gave us
    )


def find_own(mr: ProjectMergeRequest, user_id: int) -> ProjectMergeRequestNote | None:
    notes = mr.notes.list(iterator=True, sort="asc", order_by="created_at", per_page=PER_PAGE)
    for note in notes:
        author = getattr(note, "author", None) or {}
        if author.get("id") == user_id and not getattr(note, "system", False) and MARKER in (note.body or ""):
            return note
    return None


def publish(target: Target, token: str, body: str, clean: bool, policy: RetryPolicy, debug: bool = False) -> str:
    """Create, edit or leave the note; say what happened in a few words."""
    with verbose(debug):
        return _publish(target, token, body, clean, policy)


def _publish(target: Target, token: str, body: str, clean: bool, policy: RetryPolicy) -> str:
    gl = connect(target, token, policy)
    gl.auth()
    if gl.user is None:  # only without a token, which `comment` never allows
        raise GitlabError("GitLab did not say who the token belongs to")
    mr = gl.projects.get(target.project, lazy=True).mergerequests.get(target.mr, lazy=True)
    where = f"merge request !{target.mr}"
    note = find_own(mr, gl.user.id)
    if note is None:
        if clean:
            return f"nothing to report and no earlier note on {where}; no comment posted"
        created = mr.notes.create({"body": body})
        return f"created note {created.id} on {where}"
    if note.body == body:
        return f"note {note.id} on {where} is up to date"
    note.body = body
    note.save()
    return f"updated note {note.id} on {where}" + (" to all clear" if clean else "")


def describe(exc: GitlabError, target: Target) -> str:
    """A one-line reason for an API failure (the caller scrubs it)."""
    code = exc.response_code
    where = f"merge request !{target.mr} of project {target.project} at {target.url}"
    if code == 401:
        return "GitLab rejected the token (401): it is unknown, expired or revoked"
    if code == 403:
        return f"the token may not comment on {where} (403): it needs the api scope and a role that can comment"
    if code == 404:
        return f"{where} not found (404), or the token cannot see it"
    if code == 429:
        return "GitLab kept answering 429 Too Many Requests; retries exhausted or Retry-After too long"
    if code is not None and code >= 500:
        return f"GitLab answered {code} on {where} (server error; retried where repeating is safe)"
    detail = exc.error_message if isinstance(exc.error_message, str) else ""
    return f"GitLab answered {code or 'an error'}: {detail or type(exc).__name__}"
