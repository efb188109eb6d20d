"""`sunset stream replay`: the sample stream against its golden document, and the CLI contract.

Regenerate the golden file after an intended change with
`SUNSET_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/streams/test_stream_replay.py`.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from streamkit import GOLDEN, SAMPLE, SNAPSHOT, limits, stream_cli

from streams.events import load_snapshot
from streams.replay import replay_file, replay_lines, write_json

SAMPLE_ARGS = ["--allowlist-snapshot", str(SNAPSHOT), "--mass-download-allow", "90"]


def scrub(doc: dict[str, Any]) -> dict[str, Any]:
    """The JSON parser's wording of an error is not ours to pin."""
    for dead in doc["dead_letters"]:
        dead["reason"] = re.sub(r"^invalid JSON: .*", "invalid JSON: …", dead["reason"])
    return doc


def test_sample_matches_the_golden_document() -> None:
    doc = replay_file(SAMPLE, limits(mass_download_allowlist=["90"]), load_snapshot(SNAPSHOT))
    golden = GOLDEN / "sample-replay.json"
    if os.environ.get("SUNSET_UPDATE_GOLDEN"):
        with golden.open("w", encoding="utf-8") as out:
            write_json(doc, out)
    assert scrub(doc) == scrub(json.loads(golden.read_text()))


def test_sample_shows_every_detector() -> None:
    doc = replay_file(SAMPLE, limits(mass_download_allowlist=["90"]), load_snapshot(SNAPSHOT))
    assert [(f["kind"], f["id"], f.get("status")) for f in doc["findings"]] == [
        ("visibility_changed", "visibility_changed:acme/website", None),
        ("mass_download", "mass_download:66:2025-06-02T09:01:40.000Z", None),
        ("job_token_allowlist_gap", "job_token_allowlist_gap:acme/deploy>acme/shared-artifacts", "resolved"),
        ("job_token_allowlist_gap", "job_token_allowlist_gap:acme/app>acme/lib@2025-06-02T09:15:00.000Z", "open"),
        ("job_token_allowlist_gap", "job_token_allowlist_gap:oss/cli>acme/payments", "open"),
        ("job_token_public_access", "job_token_public_access:acme/deploy>acme/website", None),
        ("job_token_allowlist_gap", "job_token_allowlist_gap:acme/deploy>acme/website", "open"),
    ]
    public = {f["kind"]: (f.get("target_visibility"), f.get("feature"), f.get("severity")) for f in doc["findings"]
              if f.get("target_project") == "acme/website"}
    assert public == {"job_token_public_access": ("public", "builds", "info"),
                      "job_token_allowlist_gap": ("public", None, None)}
    assert doc["downloads"]["acme/website"] == {"repository_download_operation": 1,
                                                "public_repository_download_operation": 2}
    assert doc["downloads"]["oss/cli"] == {"repository_download_operation": 0,
                                           "public_repository_download_operation": 2}
    assert [d["line"] for d in doc["dead_letters"]] == [60, 61]
    assert doc["stats"] == {"lines": 64, "events": 65, "duplicates": 1, "ignored": 1, "dead_letters": 2,
                            "findings": 7, "projects": 12, "users": 5, "late": 0, "users_expired": 0}


def test_without_the_user_allowlist_the_backup_bot_alerts_too() -> None:
    doc = replay_file(SAMPLE, limits(), load_snapshot(SNAPSHOT))
    alerts = [(f["user"]["id"], f["projects"]) for f in doc["findings"] if f["kind"] == "mass_download"]
    assert alerts == [(66, 11), (90, 11)]


def test_cli_prints_the_same_document_every_time() -> None:
    first = stream_cli("replay", str(SAMPLE), "--format", "json", *SAMPLE_ARGS)
    second = stream_cli("replay", str(SAMPLE), "--format", "json", *SAMPLE_ARGS)
    assert (first.returncode, first.stderr) == (0, "")
    assert first.stdout == second.stdout
    assert scrub(json.loads(first.stdout)) == scrub(json.loads((GOLDEN / "sample-replay.json").read_text()))


def test_cli_usage_errors_exit_2(tmp_path: Path) -> None:
    missing = stream_cli("replay", str(tmp_path / "nope.jsonl"))
    assert (missing.returncode, missing.stdout) == (2, "")
    assert missing.stderr == f"sunset stream replay: {tmp_path / 'nope.jsonl'}: no such file\n"
    bad = tmp_path / "snapshot.json"
    bad.write_text('{"projects": []}')
    wrong = stream_cli("replay", str(SAMPLE), "--allowlist-snapshot", str(bad))
    assert wrong.returncode == 2
    assert wrong.stderr == (f"sunset stream replay: {bad}: expected "
                            '{"taken_at": …, "projects": {path: {…}}}\n')


def test_dead_letters_carry_line_numbers_and_the_rest_goes_on() -> None:
    lines = [
        b'{"id": 1, "event_type": "repository_download_operation", "entity_path": "a/b", '
        b'"created_at": "2025-06-02T09:00:00Z", "author_id": 3}\n',
        b"\n",  # blank lines are not dead letters
        b"[1, 2]\n",
        b'[{"event_type": "repository_download_operation", "entity_path": "a/b"}, {"no": "type"}]\n',
        b'{"id": 2, "event_type": "repository_download_operation", "entity_path": "a/b", '
        b'"created_at": "2025-06-02T09:00:01Z", "author_id": 3}\n',
    ]
    doc = replay_lines(lines, limits())
    assert doc["dead_letters"] == [
        {"line": 3, "reason": "element 0: not a JSON object"},
        {"line": 3, "reason": "element 1: not a JSON object"},
        {"line": 4, "reason": "element 0: missing or invalid created_at"},
        {"line": 4, "reason": "element 1: missing event_type"},
    ]
    assert doc["downloads"] == {"a/b": {"repository_download_operation": 2, "public_repository_download_operation": 0}}
    assert doc["stats"]["lines"] == 5



def test_text_format_reads_the_same_document() -> None:
    out = stream_cli("replay", str(SAMPLE), "--format", "text", *SAMPLE_ARGS)
    assert (out.returncode, out.stderr) == (0, "")
    assert out.stdout.splitlines() == [
        "Replayed 64 lines: 65 events (1 repeated delivery counted once, 1 of types no detector reads), "
        "2 dead letters.",
        "Downloads: 14 in 9 projects (repository_download_operation 9, public_repository_download_operation 5).",
        "",
        "Findings (7):",
        "  visibility_changed: acme/website downloaded as repository_download_operation, then as "
        "public_repository_download_operation at 2025-06-02T09:01:10.000Z",
        "  mass_download: Mallory Moe (66) downloaded 11 projects (limit 10) between 2025-06-02T09:01:40.000Z and "
        "2025-06-02T09:05:00.000Z",
        "  job_token_allowlist_gap: acme/deploy -> acme/shared-artifacts, 2 accesses 2025-06-02T09:10:01.200Z to "
        "2025-06-02T09:11:00.800Z by Bob Roe (12); resolved at 2025-06-02T09:13:20.000Z; allowlist snapshot",
        "  job_token_allowlist_gap: acme/app -> acme/lib, 1 access 2025-06-02T09:16:01.200Z to "
        "2025-06-02T09:16:01.200Z by Alice Doe (11); open; allowlist snapshot",
        "  job_token_allowlist_gap: oss/cli -> acme/payments, 1 access 2025-06-02T09:17:00.000Z to "
        "2025-06-02T09:17:00.000Z by no user (authentication log); open; allowlist unknown",
        "  job_token_public_access: acme/deploy -> acme/website (public), 1 access 2025-06-02T09:20:01.000Z to "
        "2025-06-02T09:20:01.000Z by Bob Roe (12): reads builds (job_artifact_downloaded), which job tokens may do "
        "on a public project without its allowlist (info)",
        "  job_token_allowlist_gap: acme/deploy -> acme/website, 1 access 2025-06-02T09:20:02.000Z to "
        "2025-06-02T09:20:02.000Z by Bob Roe (12); open; allowlist unknown; acme/website was public",
        "",
        "Dead letters (2):",
        "  line 60: invalid JSON: unexpected end of data: line 1 column 86 (char 85)",
        "  line 61: missing event_type",
    ]
