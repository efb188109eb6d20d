"""`sunset stream replay` on hostile input (issues 25 and 27): bounded memory, a clear error, text
that a terminal cannot be tricked by, and a quiet end when its reader stops reading."""

from __future__ import annotations

import json
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest
from streamkit import ROOT, SAMPLE, event, limits, special_path, stream_cli

from streams.events import BOM, MAX_PAYLOAD_BYTES, MAX_SNAPSHOT_BYTES, MAX_VALUES, too_large
from streams.replay import bounded_lines, replay_file, replay_lines


def line(body: object) -> bytes:
    return json.dumps(body).encode() + b"\n"


def test_a_byte_order_mark_keeps_the_first_event(tmp_path: Path) -> None:
    events = [event("repository_download_operation", n, ident=n) for n in range(2)]
    path = tmp_path / "bom.jsonl"
    path.write_bytes(BOM + b"".join(line(e) for e in events))
    doc = replay_file(path, limits())
    assert doc["downloads"] == {"g/p": {"repository_download_operation": 2, "public_repository_download_operation": 0}}
    assert (doc["dead_letters"], doc["stats"]["events"]) == ([], 2)


@pytest.mark.parametrize("special", ["/dev/zero", "fifo", "folder"])
def test_an_allowlist_snapshot_that_is_not_a_regular_file_is_one_line_and_exit_2(tmp_path: Path,
                                                                                 special: str) -> None:
    path = special_path(tmp_path, special)
    done = stream_cli("replay", str(SAMPLE), "--allowlist-snapshot", str(path), timeout=30)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"sunset stream replay: {path}: not a regular file\n")


def test_a_snapshot_over_the_size_bound_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    path = tmp_path / "snapshot.json"
    with path.open("wb") as out:
        out.truncate(MAX_SNAPSHOT_BYTES + 1)  # sparse: no disk, no time
    done = stream_cli("replay", str(SAMPLE), "--allowlist-snapshot", str(path))
    expected = f"sunset stream replay: {path}: larger than {MAX_SNAPSHOT_BYTES} bytes\n"
    assert (done.returncode, done.stderr) == (2, expected)


def test_a_line_longer_than_the_bound_is_one_dead_letter_read_in_bounded_memory(tmp_path: Path) -> None:
    """A one-line JSON array of events larger than a streamed body: a dead letter with its size,
    never held whole in memory; the lines around it are replayed."""
    one = line(event("repository_download_operation", 1, ident=1))
    item = json.dumps(event("repository_download_operation", 2, ident=2)).encode()
    count = 4 * MAX_PAYLOAD_BYTES // len(item)  # four times the bound: memory must not follow the line
    path = tmp_path / "huge.jsonl"
    with path.open("wb") as out:
        out.write(one + b"[" + b",".join([item] * count) + b"]\n" + one.replace(b'"id": 1', b'"id": 3'))
    size = path.stat().st_size - 2 * len(one)
    tracemalloc.start()
    try:
        doc = replay_file(path, limits())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2.5 * MAX_PAYLOAD_BYTES  # two chunks of the bound at most, whatever the line's length
    assert doc["dead_letters"] == [{"line": 2, "reason": too_large(size)}]
    assert doc["downloads"]["g/p"]["repository_download_operation"] == 2 and doc["stats"]["lines"] == 3


def test_a_line_of_too_many_values_is_refused_before_it_is_parsed() -> None:
    many = b"[" + b",".join([b"{}"] * (MAX_VALUES // 2 + 1)) + b"]\n"
    doc = replay_lines([many], limits())
    assert doc["dead_letters"] == [{"line": 1, "reason": too_large(len(many))}]


def test_bounded_lines_gives_every_line_and_the_size_of_an_overlong_one(tmp_path: Path) -> None:
    path = tmp_path / "lines"
    path.write_bytes(b"a\n" + b"x" * (MAX_PAYLOAD_BYTES + 5) + b"\nb\nlast")
    with path.open("rb") as handle:
        lines = list(bounded_lines(handle))
    assert [bytes(x) for x in lines] == [b"a\n", b"", b"b\n", b"last"]
    assert getattr(lines[1], "size", None) == MAX_PAYLOAD_BYTES + 6


def test_text_escapes_control_and_bidi_characters_from_the_events(tmp_path: Path) -> None:
    """`author_name` is a user's display name: ESC, BEL and a right-to-left override in it are
    written as escapes, never passed to the terminal."""
    evil = "Mal\x1b[2J\x07lory\u202eexe.txt"
    path = tmp_path / "events.jsonl"
    path.write_bytes(b"".join(line(event("repository_download_operation", n, project=f"g/p{n}", author=66,
                                         ident=n, name=evil)) for n in range(11)) + b"\x1b[31m\n")
    done = stream_cli("replay", str(path), "--format", "text")
    assert done.returncode == 0
    assert "Mal\\x1b[2J\\x07lory\\u202eexe.txt (66) downloaded 11 projects" in done.stdout
    assert "line 12: invalid JSON" in done.stdout
    assert not any(ch in done.stdout for ch in "\x1b\x07\u202e")


def test_replay_text_into_a_reader_that_stops_early_ends_quietly(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b"not json\n" * 20_000)  # 20,000 dead letters: more than a pipe holds
    command = [sys.executable, "-m", "scanner.cli", "stream", "replay", str(path)]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT) as replay:
        assert replay.stdout is not None and replay.stderr is not None
        first = replay.stdout.readline()
        replay.stdout.close()  # what `| head -1` does
        errors = replay.stderr.read()
        code = replay.wait(timeout=60)
    assert first.startswith(b"Replayed 20000 lines")
    assert (code, errors) == (0, b"")


def test_the_help_says_which_format_is_the_default() -> None:
    done = stream_cli("replay", "--help")
    assert "text (the default, as for `sunset scan`)" in " ".join(done.stdout.split())
