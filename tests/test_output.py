"""Text details: progress only on a terminal, redaction of secrets, lazy imports for a fast start."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from scanner import cli
from scanner.core.redact import redact_line


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_progress_waits_a_moment_then_throttles(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = FakeClock()
    monkeypatch.setattr(cli.time, "monotonic", clock)
    stream = io.StringIO()
    progress = cli._Progress(stream)
    progress(1, "a.yml")
    assert stream.getvalue() == ""  # a quick scan shows nothing
    clock.now += 0.6
    progress(2, "b.yml")
    clock.now += 0.05
    progress(3, "c.yml")  # throttled
    progress.done()
    assert stream.getvalue() == "\r\033[Kscanning… 2 files  b.yml\r\033[K"


@pytest.mark.parametrize(
    ("line", "redacted"),
    [
        (
            "    - gitlab-runner register --registration-token GR1348941xYz --url $U",
            "    - gitlab-runner register --registration-token **** --url $U",
        ),
        ('    - gitlab-runner register -r "abc123"', '    - gitlab-runner register -r "****"'),
        # A list item's value runs to the end of the line: in a compose `environment:` list it is all
        # value; in a job script the command after it is masked too (never a leak, a little less shown).
        ("    - REGISTRATION_TOKEN=abc gitlab-runner register", "    - REGISTRATION_TOKEN=****"),
        ("    - DB_PASSWORD=two words # note", "    - DB_PASSWORD=**** # note"),
        ("  RUNNER_TOKEN: glrt-t1_abcdefghijklm", "  RUNNER_TOKEN: ****"),
        ("  url: https://x/?private_token=glpat-abcdefghij1234", "  url: https://x/?private_token=****"),
        (
            "gitlab_rails['initial_shared_runners_registration_token'] = \"s3cr3t\"",
            "gitlab_rails['initial_shared_runners_registration_token'] = \"****\"",
        ),
        ("  password: hunter2", "  password: ****"),
        # references to secrets and paths are not secrets
        ("    - export TOKEN=$CI_JOB_TOKEN", "    - export TOKEN=$CI_JOB_TOKEN"),
        ("  secret_file: /etc/gitlab/mail.secret", "  secret_file: /etc/gitlab/mail.secret"),
        ("  the token is not here", "  the token is not here"),
        ("    - curl -s $URL | jq -r '.[].version'", "    - curl -s $URL | jq -r '.[].version'"),
    ],
)
def test_redaction(line: str, redacted: str) -> None:
    assert redact_line(line) == redacted


def test_scan_does_not_import_heavy_packages(tmp_path: Path) -> None:
    (tmp_path / ".gitlab-ci.yml").write_text("job:\n  script: [echo]\n")
    code = (
        "import sys, scanner.cli as c; c.main(['scan', sys.argv[1]]);"
        "heavy = {'faust', 'gitlab', 'requests', 'httpx', 'aiohttp', 'aiokafka', 'graphql'};"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines()[-1] == "[]"
