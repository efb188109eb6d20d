"""Debian's `chromium`, headless, as the tests' real browser (installed by `.ci/setup`).

`render(page, tmp)` opens a local HTML file once, in a fresh profile, with a 1280×2000 window: the DOM
as the browser built it (`--dump-dom`), a screenshot of the same page load, and the console on stderr
(`--enable-logging=stderr`: every console message, uncaught error and Content-Security-Policy
violation is a `CONSOLE` line).
Without chromium the test fails and says how to install it; it is never skipped.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--enable-logging=stderr", "--v=0"]
CONSOLE = re.compile(r":CONSOLE[:(]\d+\)?\] (.*)")
PNG = b"\x89PNG\r\n\x1a\n"
TIMEOUT = 120  # seconds; a failure, never a timing assertion


@dataclass(frozen=True)
class Rendered:
    dom: str
    console: list[str]  # the console messages, CSP violations and uncaught errors, as chromium logs them
    screenshot: bytes


def chromium() -> str:
    found = shutil.which("chromium")
    if found is None:
        pytest.fail("Debian's `chromium` is not installed, so the HTML report cannot be opened in a browser: "
                    "run `bash .ci/setup` as root (it runs `apt-get install chromium`)")
    return found


def _run(args: list[str], profile: Path) -> subprocess.CompletedProcess[bytes]:
    done = subprocess.run([chromium(), *FLAGS, f"--user-data-dir={profile}", *args], capture_output=True,
                          timeout=TIMEOUT, check=False)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-3000:]
    return done


def render(page: Path, tmp: Path) -> Rendered:
    url = page.resolve().as_uri()
    shot = tmp / "screenshot.png"
    dumped = _run(["--dump-dom", f"--screenshot={shot}", "--window-size=1280,2000", url], tmp / "profile")
    console = [m.group(1) for line in dumped.stderr.decode(errors="replace").splitlines()
               if (m := CONSOLE.search(line))]
    return Rendered(dumped.stdout.decode(), console, shot.read_bytes())
