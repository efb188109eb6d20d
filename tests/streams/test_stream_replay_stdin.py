"""`sunset stream replay -` reads the events from standard input, and `stream replay` runs from a plain
install of the wheel, without the `[stream]` extra (Faust, aiokafka, aiohttp are not installed there)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from streamkit import ROOT, SAMPLE


def replay(python: str, *args: str, data: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([python, "-m", "scanner.cli", "stream", "replay", *args], input=data, capture_output=True,
                          cwd=ROOT, timeout=120)


def test_replay_of_standard_input_is_the_replay_of_the_file() -> None:
    from_file = replay(sys.executable, str(SAMPLE))
    from_stdin = replay(sys.executable, "-", data=SAMPLE.read_bytes())
    assert (from_stdin.returncode, from_stdin.stderr) == (0, b"")
    assert from_stdin.stdout == from_file.stdout
    text = replay(sys.executable, "-", "--format", "text", data=SAMPLE.read_bytes())
    assert text.stdout == replay(sys.executable, str(SAMPLE), "--format", "text").stdout


def test_replay_runs_without_the_stream_extra(venv: Path) -> None:
    python = str(venv / "bin" / "python")
    missing = subprocess.run([python, "-c", "import importlib.util as u; print([m for m in ('faust', 'aiokafka', "
                              "'aiohttp') if u.find_spec(m)])"], capture_output=True, text=True, check=True)
    assert missing.stdout == "[]\n"
    done = subprocess.run([str(venv / "bin" / "sunset"), "stream", "replay", "-"], input=SAMPLE.read_bytes(),
                          capture_output=True, cwd=venv, timeout=120)
    assert (done.returncode, done.stderr) == (0, b"")
    assert done.stdout == replay(sys.executable, str(SAMPLE)).stdout
