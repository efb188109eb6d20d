"""`sunset allowlist`: job-token accesses from GitLab's authentication log that the allowlist does not
cover, against the stand-in (REST job-token scope and allowlists, GraphQL `ciJobTokenAuthLogs`);
dry run by default, `--apply` adds exactly the missing entries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gitlab_standin import TOKEN, Instance, StandIn

from scanner.cli import main


def instance() -> Instance:
    inst = Instance()
    inst.add("corp/tools/deployer", {})
    inst.add("corp/tools/packager", {})
    inst.add("corp/apps/api", {}, inbound_enabled=True, allowlist=["corp/tools/deployer"],
             auth_log=[("corp/tools/deployer", "2026-11-20"), ("corp/tools/packager", "2026-11-21"),
                       ("corp/apps/api", "2026-11-22"), ("partner/ci/runner", "2026-11-01")])
    inst.add("corp/apps/web", {}, groups_allowlist=["corp/tools"],
             auth_log=[("corp/tools/packager", "2026-11-19"), ("corp/apps/api", "2026-11-18")])
    inst.add("partner/ci/runner", {})
    inst.add("corp/apps/secret", {}, private=True)
    return inst


def run(url: str, tmp: Path, *extra: str) -> tuple[int, dict[str, object]]:
    out = tmp / "out.json"
    code = main(["allowlist", "--gitlab", url, "--group", "corp", "--format", "json", "-o", str(out), *extra])
    return code, json.loads(out.read_text())


REJECTED = [
    ("corp/apps/api", "corp/tools/packager", "2026-11-21", True),
    ("corp/apps/api", "partner/ci/runner", "2026-11-01", True),
    ("corp/apps/web", "corp/apps/api", "2026-11-18", False),
]


def test_dry_run_then_apply(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SUNSET_GITLAB_TOKEN", TOKEN)
    inst = instance()
    with StandIn(inst) as url:
        code, dry = run(url, tmp_path)
        assert code == 1
        assert [(g["target"], g["origin"], g["last_authorized"], g["inbound_enabled"])  # type: ignore[index]
                for g in dry["rejected"]] == REJECTED  # type: ignore[attr-defined]
        assert dry["added"] == [] and dry["problems"] == []
        assert inst.count("POST", "/api/v4/projects") == 0  # a dry run writes nothing
        code, applied = run(url, tmp_path, "--apply")
        assert code == 0
        assert [(g["target"], g["origin"]) for g in applied["added"]] == [  # type: ignore[index, attr-defined]
            (t, o) for t, o, _, _ in REJECTED]
        api, web = inst.project("corp/apps/api"), inst.project("corp/apps/web")
        assert api is not None and web is not None
        assert api.allowlist == ["corp/tools/deployer", "corp/tools/packager", "partner/ci/runner"]
        assert web.allowlist == ["corp/apps/api"]
        code, again = run(url, tmp_path)
        assert (code, again["rejected"]) == (0, [])
        assert main(["allowlist", "--gitlab", url, "--group", "corp"]) == 0
        assert capsys.readouterr().out == "0 job-token access(es) that allowlist enforcement rejects (dry run; " \
                                          "--apply adds them):\n"


def test_text_and_a_project_whose_log_cannot_be_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SUNSET_GITLAB_TOKEN", TOKEN)
    inst = instance()
    inst.add("corp/apps/locked", {}, forbidden=True)
    with StandIn(inst) as url:
        assert main(["allowlist", "--gitlab", url, "--group", "corp"]) == 1
    assert capsys.readouterr().out == (
        "3 job-token access(es) that allowlist enforcement rejects (dry run; --apply adds them):\n"
        "  corp/apps/api ← corp/tools/packager  last authorized 2026-11-21  (rejected today: the project already "
        "limits access)\n"
        "  corp/apps/api ← partner/ci/runner  last authorized 2026-11-01  (rejected today: the project already "
        "limits access)\n"
        "  corp/apps/web ← corp/apps/api  last authorized 2026-11-18\n"
        "  problem: corp/apps/locked: job token scope of `corp/apps/locked`: 403 Forbidden\n")
    monkeypatch.delenv("SUNSET_GITLAB_TOKEN")
    assert main(["allowlist", "--gitlab", "http://127.0.0.1:9", "--group", "corp"]) == 2
    assert "SUNSET_GITLAB_TOKEN" in capsys.readouterr().err
