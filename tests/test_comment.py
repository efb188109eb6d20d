"""`sunset comment` against a real HTTP server on 127.0.0.1 that speaks GitLab's notes API.

The fake implements the parts of the REST v4 contract python-gitlab relies on: `GET /user`;
`GET /projects/:id/merge_requests/:iid/notes` with `page`/`per_page`/`sort` and the pagination
headers (`X-Page`, `X-Next-Page`, `X-Total-Pages`, `Link`); `POST` to create; `PUT .../notes/:id`
to edit (403 on someone else's note, as GitLab does); 401 on an unknown token; 404 on an unknown
project or merge request. Faults (429 with Retry-After, 502) are injected once each.
No assertion depends on time: retry waits are recorded, not slept.
"""

from __future__ import annotations

import argparse
import json
import logging
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
import requests

from scanner.commands import comment
from scanner.core.results import Report
from scanner.gitlab import retry
from scanner.report.jsonfmt import report_dict
from scanner.report.markdown import MARKER

from conftest import ROOT, run_scan

TOKEN = "glpat-Sup3rS3cretT0ken-xyz"
READER_TOKEN = "glpat-reader-only-token"
BOT = {"id": 7, "username": "sunset-bot"}
ALICE = {"id": 11, "username": "alice"}
BOB = {"id": 12, "username": "bob"}
READER = {"id": 13, "username": "reader"}
PROJECT, MR = "42", 7
NOTES_PATH = f"/api/v4/projects/{PROJECT}/merge_requests/{MR}/notes"


@dataclass
class Fault:
    method: str
    path: str
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    echo_token: bool = False  # answer with the request's token in the message, as a careless proxy might


@dataclass
class FakeGitLab:
    """State of the fake: notes of one merge request, a request log, faults served once."""

    users: dict[str, dict[str, Any]] = field(default_factory=lambda: {TOKEN: BOT, READER_TOKEN: READER})
    notes: list[dict[str, Any]] = field(default_factory=list)
    log: list[tuple[str, str]] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    base: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add_note(self, body: str, author: dict[str, Any], system: bool = False) -> dict[str, Any]:
        note = {"id": 1000 + len(self.notes), "body": body, "author": dict(author), "system": system,
                "noteable_type": "MergeRequest", "noteable_iid": MR}
        self.notes.append(note)
        return note

    def take_fault(self, method: str, path: str) -> Fault | None:
        for fault in self.faults:
            if fault.method == method and path == fault.path:
                self.faults.remove(fault)
                return fault
        return None


class Handler(BaseHTTPRequestHandler):
    server: _Server
    disable_nagle_algorithm = True  # headers and body are separate writes (tests/gitlab_standin.py)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 — quiet; the test keeps its own log
        pass

    def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> dict[str, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(length) or b"{}")  # type: ignore[no-any-return]

    def _handle(self, method: str) -> None:
        gl = self.server.gitlab
        url = urlsplit(self.path)
        with gl.lock:
            gl.log.append((method, url.path))
            fault = gl.take_fault(method, url.path)
            token = self.headers.get("PRIVATE-TOKEN", "")
            if fault:
                echo = f" for PRIVATE-TOKEN: {token} ({token})" if fault.echo_token else ""
                self._send(fault.status, {"message": f"{fault.status} injected{echo}"}, fault.headers)
                return
            user = gl.users.get(token)
            if user is None:  # echo the token: sunset must not print it
                self._send(401, {"message": f"401 Unauthorized: token {token} is invalid"})
                return
            self._route(method, url.path, parse_qs(url.query), user)

    def _route(self, method: str, path: str, query: dict[str, list[str]], user: dict[str, Any]) -> None:
        gl = self.server.gitlab
        if path == "/api/v4/user" and method == "GET":
            self._send(200, {**user, "web_url": f"{gl.base}/{user['username']}"})
        elif path == NOTES_PATH and method == "GET":
            self._list(query)
        elif path == NOTES_PATH and method == "POST":
            if user is READER:
                self._send(403, {"message": "403 Forbidden"})
                return
            self._send(201, gl.add_note(self._body()["body"], user))
        elif path.startswith(NOTES_PATH + "/") and method == "PUT":
            self._edit(int(path.rsplit("/", 1)[1]), user)
        else:
            self._send(404, {"message": "404 Not found"})

    def _edit(self, note_id: int, user: dict[str, Any]) -> None:
        note = next((n for n in self.server.gitlab.notes if n["id"] == note_id), None)
        if note is None:
            self._send(404, {"message": "404 Note Not Found"})
        elif note["author"]["id"] != user["id"]:
            self._send(403, {"message": "403 Forbidden"})
        else:
            note["body"] = self._body()["body"]
            self._send(200, note)

    def _list(self, query: dict[str, list[str]]) -> None:
        gl = self.server.gitlab
        page = int(query.get("page", ["1"])[0])
        per_page = min(int(query.get("per_page", ["20"])[0]), 100)
        notes = gl.notes if query.get("sort", ["desc"])[0] == "asc" else gl.notes[::-1]
        pages = max(1, -(-len(notes) // per_page))
        items = notes[(page - 1) * per_page: page * per_page]

        def link(p: int) -> str:
            params = {k: v[0] for k, v in query.items()} | {"page": str(p), "per_page": str(per_page)}
            return f"{gl.base}{NOTES_PATH}?{urlencode(params)}"

        rels = [(page + 1, "next")] if page < pages else []
        rels += [(page - 1, "prev")] if page > 1 else []
        rels += [(1, "first"), (pages, "last")]
        self._send(200, items, {
            "X-Page": str(page), "X-Per-Page": str(per_page), "X-Total": str(len(notes)),
            "X-Total-Pages": str(pages), "X-Next-Page": str(page + 1) if page < pages else "",
            "X-Prev-Page": str(page - 1) if page > 1 else "",
            "Link": ", ".join(f'<{link(p)}>; rel="{rel}"' for p, rel in rels),
        })

    def do_GET(self) -> None:  # noqa: N802
        self._handle("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._handle("POST")

    def do_PUT(self) -> None:  # noqa: N802
        self._handle("PUT")


class _Server(ThreadingHTTPServer):
    gitlab: FakeGitLab


@pytest.fixture
def fake() -> Iterator[FakeGitLab]:
    gl = FakeGitLab()
    for i in range(230):  # three pages of 100: our note is found only by following pagination
        gl.add_note(f"review comment {i} from @alice", ALICE if i % 2 else BOB, system=(i == 3))
    gl.notes[5]["body"] = f"{MARKER}\nbob pasted an old sunset report here"
    server = _Server(("127.0.0.1", 0), Handler)
    server.gitlab = gl
    gl.base = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    yield gl
    server.shutdown()
    server.server_close()
    thread.join()


@pytest.fixture(scope="module")
def findings_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from scanner.rules.catalog import builtin_policy_dir, load_policies

    report = run_scan([ROOT / "samples"], load_policies([builtin_policy_dir()]))
    path = tmp_path_factory.mktemp("reports") / "findings.json"
    path.write_text(json.dumps(report_dict(report)), encoding="utf-8")
    return path


@pytest.fixture
def clean_report(tmp_path: Path) -> Path:
    path = tmp_path / "clean.json"
    path.write_text(json.dumps(report_dict(Report(target="19.0", files_scanned=6))), encoding="utf-8")
    return path


def headline(report: Path) -> str:
    breaking = sum(f["severity"] == "error" for f in json.loads(report.read_text(encoding="utf-8"))["findings"])
    assert breaking > 1
    return f"### sunset: {breaking} findings break on GitLab 19.0"


def ci_env(gl: FakeGitLab, **extra: str) -> dict[str, str]:
    return {
        "CI_API_V4_URL": f"{gl.base}/api/v4",
        "CI_PROJECT_ID": PROJECT,
        "CI_MERGE_REQUEST_IID": str(MR),
        "CI_PROJECT_URL": f"{gl.base}/group/project",
        "CI_COMMIT_SHA": "0123456789abcdef",
        "SUNSET_GITLAB_TOKEN": TOKEN,
        **extra,
    }


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="sunset")
    comment.configure(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(["comment", *argv])


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def run(report: Path, env: dict[str, str], *flags: str, sleeps: Sleeps | None = None) -> int:
    policy = retry.RetryPolicy(backoff=0.25, sleep=sleeps if sleeps is not None else Sleeps())
    return comment.run(parse("--report", str(report), "--verbose", *flags), retry=policy, env=env)


def others(gl: FakeGitLab) -> list[dict[str, Any]]:
    return [json.loads(json.dumps(n)) for n in gl.notes if n["author"]["id"] != BOT["id"]]


def ours(gl: FakeGitLab) -> list[dict[str, Any]]:
    return [n for n in gl.notes if n["author"]["id"] == BOT["id"]]


def test_create_then_update_then_all_clear(
    fake: FakeGitLab, findings_report: Path, clean_report: Path,
    capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    before = others(fake)

    assert run(findings_report, ci_env(fake)) == 0
    [note] = ours(fake)
    assert note["body"].startswith(f"{MARKER}\n\n{headline(findings_report)}\n")
    assert f"{fake.base}/group/project/-/blob/0123456789abcdef/ci/runners.yml#L19" in note["body"]
    assert capsys.readouterr().out == f"sunset comment: created note {note['id']} on merge request !7\n"

    assert run(findings_report, ci_env(fake, CI_COMMIT_SHA="fedcba9876543210")) == 0
    assert ours(fake) == [note]  # the same note, edited in place
    assert "/-/blob/fedcba9876543210/" in note["body"]
    assert capsys.readouterr().out == f"sunset comment: updated note {note['id']} on merge request !7\n"

    assert run(clean_report, ci_env(fake)) == 0
    assert ours(fake) == [note]
    assert note["body"].startswith(MARKER + "\n\n### sunset: all clear for GitLab 19.0\n")
    out, err = capsys.readouterr()
    assert out == f"sunset comment: updated note {note['id']} on merge request !7 to all clear\n"

    assert others(fake) == before  # including bob's note that quotes the marker
    writes = [(m, p) for m, p in fake.log if m != "GET"]
    edit = ("PUT", f"{NOTES_PATH}/{note['id']}")
    assert writes == [("POST", NOTES_PATH), edit, edit]
    assert ("GET", NOTES_PATH) in fake.log and "GET /api/v4/projects" in err  # --verbose logged requests
    assert TOKEN not in out + err + caplog.text
    # --verbose lasts for its command: the loggers are as they were, so a later call logs nothing
    assert [logging.getLogger(n).level for n in ("sunset", "urllib3")] == [logging.NOTSET, logging.NOTSET]
    assert not [h for n in ("sunset", "urllib3") for h in logging.getLogger(n).handlers
                if not isinstance(h, logging.NullHandler)]  # urllib3 installs a NullHandler of its own
    requests.get(f"{fake.base}/api/v4/version", timeout=5)
    assert capsys.readouterr() == ("", "")


def test_pagination_was_followed(fake: FakeGitLab, findings_report: Path) -> None:
    assert run(findings_report, ci_env(fake)) == 0  # creates the 231st note, on page 3
    fake.log.clear()
    assert run(findings_report, ci_env(fake)) == 0
    assert fake.log.count(("GET", NOTES_PATH)) == 3
    assert len(ours(fake)) == 1


def test_clean_run_without_earlier_note_posts_nothing(
    fake: FakeGitLab, clean_report: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(clean_report, ci_env(fake)) == 0
    assert ours(fake) == []
    assert capsys.readouterr().out == (
        "sunset comment: nothing to report and no earlier note on merge request !7; no comment posted\n"
    )


def test_retries_429_with_retry_after_and_502(
    fake: FakeGitLab, findings_report: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    note = fake.add_note(MARKER + "\nold", BOT)
    fake.faults = [
        Fault("GET", NOTES_PATH, 429, {"Retry-After": "7"}),
        Fault("PUT", f"{NOTES_PATH}/{note['id']}", 502),
    ]
    sleeps = Sleeps()
    assert run(findings_report, ci_env(fake), sleeps=sleeps) == 0
    assert sleeps == [7.0, 0.25]  # Retry-After honoured; then the policy's first backoff
    assert fake.faults == []
    assert fake.log.count(("PUT", f"{NOTES_PATH}/{note['id']}")) == 2
    assert note["body"].startswith(MARKER + "\n\n### sunset:")
    assert "updated note" in capsys.readouterr().out


def test_a_failed_post_is_not_repeated(
    fake: FakeGitLab, findings_report: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.faults = [Fault("POST", NOTES_PATH, 502)]
    sleeps = Sleeps()
    assert run(findings_report, ci_env(fake), sleeps=sleeps) == 2
    assert fake.log.count(("POST", NOTES_PATH)) == 1 and sleeps == []  # it may have landed: no second note
    assert capsys.readouterr().err.splitlines()[-1].startswith("sunset comment: GitLab answered 502")


def test_retry_after_longer_than_the_cap_gives_up(
    fake: FakeGitLab, findings_report: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.faults = [Fault("GET", "/api/v4/user", 429, {"Retry-After": "3600"})]
    sleeps = Sleeps()
    assert run(findings_report, ci_env(fake), sleeps=sleeps) == 2
    assert sleeps == []
    assert "429" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("env_change", "flags", "expected"),
    [
        ({"SUNSET_GITLAB_TOKEN": "glpat-wrong-token-123"}, (), "GitLab rejected the token (401)"),
        ({"SUNSET_GITLAB_TOKEN": READER_TOKEN}, (), "may not comment on merge request !7 of project 42"),
        ({}, ("--mr", "999"), "merge request !999 of project 42 at http://127.0.0.1"),
        ({}, ("--project", "nope/nope"), "not found (404)"),
    ],
)
def test_api_errors_are_one_line_and_exit_2(
    fake: FakeGitLab, findings_report: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture,
    env_change: dict[str, str], flags: tuple[str, ...], expected: str,
) -> None:
    caplog.set_level(logging.DEBUG)
    env = ci_env(fake) | env_change
    assert run(findings_report, env, *flags) == 2
    out, err = capsys.readouterr()
    last = err.splitlines()[-1]
    assert last.startswith("sunset comment: ") and expected in last
    assert ours(fake) == []
    for secret in (TOKEN, READER_TOKEN, "glpat-wrong-token-123"):
        assert secret not in out + err + caplog.text


def test_error_text_from_gitlab_is_scrubbed(
    fake: FakeGitLab, findings_report: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    fake.faults = [Fault("POST", NOTES_PATH, 400, echo_token=True)]
    assert run(findings_report, ci_env(fake)) == 2
    out, err = capsys.readouterr()
    assert err.splitlines()[-1] == "sunset comment: GitLab answered 400: 400 injected for PRIVATE-TOKEN: **** (****)"
    assert TOKEN not in out + err + caplog.text


def test_report_that_breaks_the_contract(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = report_dict(Report(target="19.0"))
    report["findings"] = [{"rule_id": "x"}]
    path = tmp_path / "r.json"
    path.write_text(json.dumps(report), encoding="utf-8")
    assert comment.run(parse("--report", str(path), "--dry-run"), env={}) == 2
    assert "does not follow the JSON contract" in capsys.readouterr().err


def test_token_from_another_variable(fake: FakeGitLab, findings_report: Path) -> None:
    env = ci_env(fake) | {"SUNSET_GITLAB_TOKEN": "", "MY_TOKEN": TOKEN}
    assert run(findings_report, env, "--token-env", "MY_TOKEN") == 0
    assert len(ours(fake)) == 1


@pytest.mark.parametrize(
    ("env_change", "expected"),
    [
        ({"SUNSET_GITLAB_TOKEN": ""}, "no token: set SUNSET_GITLAB_TOKEN"),
        ({"SUNSET_GITLAB_TOKEN": "glpat-abc def"}, "SUNSET_GITLAB_TOKEN contains spaces or control characters"),
        ({"CI_MERGE_REQUEST_IID": ""}, "missing --mr (or CI_MERGE_REQUEST_IID"),
        ({"CI_API_V4_URL": "", "CI_PROJECT_ID": ""}, "missing --gitlab-url (or CI_SERVER_URL), --project"),
    ],
)
def test_setup_errors(
    fake: FakeGitLab, findings_report: Path, capsys: pytest.CaptureFixture[str],
    env_change: dict[str, str], expected: str,
) -> None:
    assert run(findings_report, ci_env(fake) | env_change) == 2
    err = capsys.readouterr().err
    assert expected in err and len(err.splitlines()) == 1 and "abc def" not in err
    assert fake.log == []


def test_dry_run_prints_the_body_and_calls_nobody(
    fake: FakeGitLab, findings_report: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(findings_report, {"CI_MERGE_REQUEST_IID": "7"}, "--dry-run") == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{MARKER}\n\n{headline(findings_report)}\n")
    assert fake.log == []


def test_not_a_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"version": 2}', encoding="utf-8")
    assert comment.run(parse("--report", str(bad), "--dry-run"), env={}) == 2
    assert "not a sunset JSON report" in capsys.readouterr().err


def test_retry_policy() -> None:
    policy = retry.RetryPolicy(retries=3, backoff=0.5, max_wait=10)
    assert [policy.delay(n, None) for n in range(4)] == [0.5, 1.0, 2.0, None]
    assert policy.delay(0, "4") == 4.0
    assert policy.delay(0, "11") is None  # longer than the cap: give up rather than stall the job
    assert policy.statuses("PUT") == {429, 500, 502, 503, 504} and policy.statuses("POST") == {429}
    now = 1_700_000_000.0  # 2023-11-14 22:13:20 GMT
    assert retry.retry_after_seconds("Tue, 14 Nov 2023 22:13:25 GMT", now=now) == 5.0
    assert retry.retry_after_seconds("soon", now=now) is None


def test_scrub() -> None:
    assert comment.scrub("bad token s3cr3t\nagain s3cr3t", "s3cr3t") == "bad token **** again ****"
    assert comment.scrub("headers: {'PRIVATE-TOKEN': 'other'}", "x") == "headers: {'PRIVATE-TOKEN': '****'}"


def test_command_module_imports_no_http_client() -> None:
    import subprocess
    import sys

    code = "import sys, scanner.commands.comment; print(any(m in sys.modules for m in ('gitlab', 'requests')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "False"


class _Hop(BaseHTTPRequestHandler):
    """Answers `/old/...` with a 302 to `location` + the rest of the path; records the headers of
    every other request and answers 401, as GitLab does to a request without a token."""

    disable_nagle_algorithm = True

    server: _HopServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass

    def do_GET(self) -> None:  # noqa: N802
        if self.path.startswith("/old/"):
            self.send_response(302)
            self.send_header("Location", self.server.location + self.path[len("/old"):])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.server.seen.append({k.lower(): v for k, v in self.headers.items()})
        data = b'{"message": "401 Unauthorized"}'
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _HopServer(ThreadingHTTPServer):
    location = ""
    seen: list[dict[str, str]]


@pytest.fixture
def hops() -> Iterator[tuple[_HopServer, _HopServer]]:
    servers = []
    for _ in range(2):
        server = _HopServer(("127.0.0.1", 0), _Hop)
        server.seen = []
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True).start()
        servers.append(server)
    yield servers[0], servers[1]
    for server in servers:
        server.shutdown()
        server.server_close()


def _base(server: _HopServer) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}"


def _redirected_env(first: _HopServer) -> dict[str, str]:
    return {"CI_API_V4_URL": f"{_base(first)}/old/api/v4", "CI_PROJECT_ID": PROJECT,
            "CI_MERGE_REQUEST_IID": str(MR), "SUNSET_GITLAB_TOKEN": TOKEN}


def test_the_token_does_not_follow_a_redirect_to_another_origin(
    hops: tuple[_HopServer, _HopServer], findings_report: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = hops
    first.location = _base(second)  # the same host on another port: another origin
    assert run(findings_report, _redirected_env(first)) == 2
    assert second.seen, "the redirect was followed"
    for headers in second.seen:
        assert not {"private-token", "job-token", "authorization"} & headers.keys()
        assert TOKEN not in json.dumps(headers)
    assert TOKEN not in "".join(capsys.readouterr())


def test_the_token_follows_a_redirect_within_the_origin(
    hops: tuple[_HopServer, _HopServer], findings_report: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, _ = hops
    first.location = _base(first)
    assert run(findings_report, _redirected_env(first)) == 2  # 401 from the recorder
    assert first.seen and all(h.get("private-token") == TOKEN for h in first.seen)
    capsys.readouterr()
