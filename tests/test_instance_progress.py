"""An instance scan as a user runs it: progress on a terminal's stderr whatever the format (and nothing
when stderr is not a terminal), and a server that cannot be reached named in one line with the cause,
at once — a pseudo-terminal for a real process, the GitLab stand-in and plain sockets on 127.0.0.1."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from gitlab_standin import TOKEN, StandIn
from test_instance_scan import acme
from urllib3.exceptions import MaxRetryError, NameResolutionError, NewConnectionError

from scanner.core.results import InputError, Report
from scanner.gitlab.retry import unreachable
from scanner.report.jsonfmt import report_dict

from conftest import sunset


def scan(args: list[str], tmp: Path, tty: bool, after: str | None = None) -> tuple[int, str]:
    """`sunset …` and what it wrote on stderr: in its own process with a pseudo-terminal as stderr
    when `tty`; `after`: the seconds before progress shows (`SUNSET_PROGRESS_AFTER`), for a scan too
    quick on a fast machine."""
    env = {"SUNSET_GITLAB_TOKEN": TOKEN, "TERM": "xterm", "SUNSET_PROGRESS_AFTER": after}
    done = sunset(*args, "--cache-dir", tmp / "cache", cwd=tmp, env=env, tty="stderr" if tty else None)
    return done.returncode, done.stderr


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["html", "json", "text"])
def test_an_instance_scan_shows_progress_on_a_terminal(tmp_path: Path, fmt: str) -> None:
    inst = acme()
    # text: the default wait before progress shows, with a scan long enough (over half a second);
    # the other formats show it from the start
    after = None if fmt == "text" else "0"
    inst.latency = 0.15 if after is None else 0.0
    with StandIn(inst) as url:
        code, shown = scan(["scan", "--gitlab", url, "--group", "acme", "--format", fmt, "-o",
                            str(tmp_path / f"r.{fmt}")], tmp_path, tty=True, after=after)
        assert code == 1
        lines = [part for part in shown.split("\r\x1b[K") if part]
        assert lines and all(line.startswith("scanning… ") and " projects  acme/" in line for line in lines), shown
        counts = [int(line.split()[1]) for line in lines]
        assert counts == sorted(counts) and counts[-1] <= len(inst.projects)
        assert shown.endswith("\r\x1b[K")  # the line is cleared before the command ends
        code, said = scan(["scan", "--gitlab", url, "--group", "acme", "--format", fmt, "-o",
                           str(tmp_path / f"again.{fmt}")], tmp_path, tty=False)
        assert (code, said) == (1, "")  # not a terminal: nothing


def test_a_checkout_scan_into_a_file_shows_progress_too(tmp_path: Path) -> None:
    for i in range(400):
        (tmp_path / f"p{i}").mkdir()
        (tmp_path / f"p{i}" / ".gitlab-ci.yml").write_text("include:\n  - template: Terraform.gitlab-ci.yml\n"
                                                          + "job:\n  script: [make]\n" * 1, encoding="utf-8")
    # 400 files take well under the default half second on a fast machine: show progress from the start
    code, shown = scan(["scan", ".", "--format", "sarif", "-o", "out.sarif"], tmp_path, tty=True, after="0")
    assert code == 1
    assert "scanning… " in shown and " files  p" in shown and shown.endswith("\r\x1b[K")


@pytest.fixture
def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Silent:
    """Accepts connections, counts them, and closes each at once: no HTTP, no TLS."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            conn.close()


@pytest.fixture
def silent() -> Iterator[Silent]:
    server = Silent()
    yield server
    server.sock.close()


def test_an_unreachable_host_is_one_line_naming_host_and_cause(tmp_path: Path, closed_port: int,
                                                               silent: Silent) -> None:
    code, said = scan(["scan", "--gitlab", f"http://127.0.0.1:{closed_port}", "--group", "acme"], tmp_path,
                      tty=False)
    assert (code, said) == (2, f"sunset: --gitlab: cannot reach 127.0.0.1:{closed_port}: connection refused "
                               "(nothing listens on that port)\n")
    code, said = scan(["scan", "--gitlab", f"https://127.0.0.1:{silent.port}", "--group", "acme"], tmp_path,
                      tty=False)
    assert code == 2 and said.startswith(f"sunset: --gitlab: cannot reach 127.0.0.1:{silent.port}: the TLS "
                                         "handshake failed (") and said.count("\n") == 1
    assert silent.accepted == 1  # said at once: python-gitlab's retries never ran


def test_the_comment_names_the_cause_too(tmp_path: Path, closed_port: int) -> None:
    report = tmp_path / "r.json"
    data = report_dict(Report(target="18.0", errors=[InputError("x", 1, "unreadable")], files_scanned=1))
    report.write_text(json.dumps(data), encoding="utf-8")
    done = sunset("comment", "--report", report, "--gitlab-url", f"http://127.0.0.1:{closed_port}", "--project",
                  "1", "--mr", "2", env={"SUNSET_GITLAB_TOKEN": TOKEN})
    assert (done.returncode, done.stderr) == (2, f"sunset comment: cannot reach GitLab at http://127.0.0.1:"
                                                 f"{closed_port}: connection refused (nothing listens on that port)\n")


def test_causes_from_the_chain_requests_raises() -> None:
    def chained(reason: Exception) -> requests.ConnectionError:
        return requests.ConnectionError(MaxRetryError(None, "/api/v4/groups/acme", reason))  # type: ignore[arg-type]

    dns = NameResolutionError("gitlab.example", None, socket.gaierror(-2, "Name or service not known"))  # type: ignore[arg-type]
    assert unreachable(chained(dns), 30) == "the host name does not resolve"
    unreach = NewConnectionError(None, "Failed to establish a new connection")  # type: ignore[arg-type]
    unreach.__context__ = OSError(101, "Network is unreachable")
    assert unreachable(chained(unreach), 30) == "network is unreachable"
    timeout = requests.exceptions.ConnectTimeout(MaxRetryError(None, "/", TimeoutError("timed out")))  # type: ignore[arg-type]
    assert unreachable(timeout, 30) == "no answer within 30 s"
    assert unreachable(requests.HTTPError("500 Server Error"), 30) is None  # it answered
