"""`sunset stream …` says every error as `sunset scan` does (issue 27): one line, exit 2, every
secret in it masked, an output file that cannot be written said in scan's words, and a file named
by an option that is no regular file refused before it is read (a device or a FIFO would be read
without end or waited on)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from streamkit import SAMPLE, special_path

from conftest import sunset

TOKEN = "glpat-xK9fQ2mZ7pL4vB8nR1tY"


def test_a_missing_file_whose_name_holds_a_token_is_said_masked(tmp_path: Path) -> None:
    done = sunset("stream", "replay", f"events-{TOKEN}.jsonl", cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", "sunset stream replay: ****: no such file\n")


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_an_output_into_a_missing_folder_is_said_in_scans_words(tmp_path: Path, fmt: str) -> None:
    target = tmp_path / "missing" / "out.json"
    (tmp_path / "ci.yml").write_text("job:\n  script: [true]\n")
    scan = sunset("scan", tmp_path / "ci.yml", "--format", fmt, "-o", target)
    replay = sunset("stream", "replay", SAMPLE, "--format", fmt, "-o", target)
    reason = f"cannot write {fmt} report to {target}: the folder {target.parent} does not exist\n"
    assert (scan.returncode, scan.stderr) == (2, f"sunset: {reason}")
    assert (replay.returncode, replay.stdout, replay.stderr) == (2, "", f"sunset stream replay: {reason}")


def test_an_output_to_a_fifo_without_a_reader_is_refused_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    done = sunset("stream", "replay", SAMPLE, "-o", fifo, process=True, timeout=60)
    assert (done.returncode, done.stderr) == (
        2, f"sunset stream replay: cannot write text report to {fifo}: a FIFO with no reader\n")


def test_an_output_to_a_folder_named_with_a_token_is_said_masked_as_scan_says_it(tmp_path: Path) -> None:
    (tmp_path / "x" / TOKEN).mkdir(parents=True)
    (tmp_path / "ci.yml").write_text("job:\n  script: [true]\n")
    scan = sunset("scan", "ci.yml", "-o", f"x/{TOKEN}", cwd=tmp_path)
    replay = sunset("stream", "replay", SAMPLE, "-o", f"x/{TOKEN}", cwd=tmp_path)
    assert (scan.returncode, scan.stderr) == (2, "sunset: cannot write text report to ****: a folder\n")
    assert (replay.returncode, replay.stderr) == (
        2, "sunset stream replay: cannot write text report to ****: a folder\n")


def test_the_output_file_is_written_whole(tmp_path: Path) -> None:
    target = tmp_path / "replay.json"
    done = sunset("stream", "replay", SAMPLE, "--format", "json", "-o", target)
    printed = sunset("stream", "replay", SAMPLE, "--format", "json")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert target.read_text(encoding="utf-8") == printed.stdout


@pytest.mark.parametrize("special", ["/dev/zero", "fifo", "folder", "missing"])
@pytest.mark.parametrize(("command", "option"), [("receive", "--token-file"), ("publish", ""), ("dev", "--load"),
                                                 ("replay", "")])
def test_a_file_option_that_is_no_regular_file_is_one_line_and_exit_2(tmp_path: Path, special: str,
                                                                       command: str, option: str) -> None:
    path = special_path(tmp_path, special)
    broker = ["--broker", "kafka://127.0.0.1:1"] if command in ("receive", "publish") else []  # never reached
    done = sunset("stream", command, *[option] * bool(option), path, *broker, process=True, timeout=60)
    said = f"{option} {path}" if option else str(path)
    why = "no such file" if special == "missing" else "not a regular file"
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"sunset stream {command}: {said}: {why}\n")


def test_a_token_file_over_one_line_s_bound_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_bytes(b"a" * 5000)
    done = sunset("stream", "receive", "--token-file", path)
    assert (done.returncode, done.stderr) == (
        2, f"sunset stream receive: --token-file {path}: larger than 4096 bytes; a token is one line\n")


def test_a_broker_address_with_a_password_is_said_masked() -> None:
    done = sunset("stream", "findings", "--broker", "kafka://user:hunter2@127.0.0.1:1", process=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (
        2, "", "sunset stream findings: cannot reach the broker at kafka://user:****@127.0.0.1:1 "
               "(KafkaConnectionError)\n")


def test_a_bad_setting_from_the_environment_is_one_line_with_its_secret_masked() -> None:
    done = sunset("stream", "publish", SAMPLE, env={"SUNSET_BROKER": f"kafka://u:{TOKEN}@x", "SUNSET_PARTITIONS": "0"})
    assert done.returncode == 2
    assert done.stderr.startswith("sunset stream publish: 1 validation error for StreamSettings partitions")
    assert (done.stderr.count("\n"), TOKEN in done.stderr) == (1, False)
