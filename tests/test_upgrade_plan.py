"""`--from`: the release the instance runs today. A change in effect at or before it is info (its
message says since when); with both ends known the report shows GitLab's required upgrade stops and
what takes effect at each (text and JSON); `--gitlab URL` reads the release from the instance."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gitlab_standin import TOKEN, Instance, StandIn
from hypothesis import given
from hypothesis import strategies as st

from scanner.cli import main
from scanner.core.upgrade import DATA, Stop, load_stops, plan, stops_between
from scanner.core.versions import Version
from scanner.gitlab.version import VersionError, instance_release, release_of

FIXTURE = Path(__file__).parent / "data" / "upgrade"


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code = main(["scan", str(FIXTURE), "--format", "json", *args])
    return code, json.loads(capsys.readouterr().out)


def _by_rule(report: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {f["rule_id"]: (f["severity"], f["message"]) for f in report["findings"]}


def test_the_stops_are_gitlabs_from_15_on() -> None:
    stops = [s for s in load_stops() if s.release >= Version(15, 0)]
    assert [str(s.release) for s in stops] == [
        "15.0", "15.4", "15.11", "16.3", "16.7", "16.11", "17.1", "17.3", "17.5", "17.8", "17.11",
        "18.2", "18.5", "18.8", "18.11"]
    assert [str(s.release) for s in stops if s.conditional] == ["17.1"]
    assert "gitlabhq/gitlabhq at commit 09155a460a5e9dd6fcd3b8fb4ea2d7ae05d98cf8" in DATA.read_text(encoding="utf-8")


def test_a_malformed_stop_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "upgrade-path.yml"
    bad.write_text("- major: 17\n  minor: 3\n- major: 18\n", encoding="utf-8")
    with pytest.raises(ValueError, match="upgrade-path.yml: stop 2: needs integer `major` and `minor`"):
        load_stops(bad)


def test_stops_between_leave_out_both_ends() -> None:
    stops = (Stop(Version(16, 11)), Stop(Version(17, 3)), Stop(Version(17, 5)))
    assert stops_between(Version(16, 11), Version(17, 5), stops) == [Stop(Version(17, 3))]
    assert plan([], Version(17, 3), Version(17, 5), stops)[0].release == "17.5"


def test_in_effect_changes_are_info_and_say_since_when(capsys: pytest.CaptureFixture[str]) -> None:
    _, without = _json(capsys, "--target", "19.0")
    _, since = _json(capsys, "--target", "19.0", "--from", "16.11")
    assert _by_rule(without)["ci-build-variables"][0] == "error"
    severity, message = _by_rule(since)["ci-build-variables"]
    assert severity == "info"
    assert message.endswith("In effect since GitLab 16.0, at or before 16.11, the release you run.")
    # a change of the upgrade at hand keeps its severity and its message
    assert _by_rule(since)["cs-disable-dependency-list"] == _by_rule(without)["cs-disable-dependency-list"]
    assert "upgrade" not in without and "from" not in without


def test_the_plan_puts_each_change_at_its_step(capsys: pytest.CaptureFixture[str]) -> None:
    code, report = _json(capsys, "--target", "19.0", "--from", "16.11")
    assert code == 1
    up = report["upgrade"]
    assert (report["from"], up["from"], up["target"], up["stops_known_until"]) == ("16.11", "16.11", "19.0", "18.11")
    steps = {s["release"]: (s["required"], s["conditional"], s["policies"]) for s in up["steps"]}
    assert list(steps) == ["17.1", "17.3", "17.5", "17.8", "17.11", "18.2", "18.5", "18.8", "18.11", "19.0"]
    assert steps["17.1"] == (False, True, ["cs-disable-dependency-list"])  # removed in 17.0: breaks on the way to 17.1
    assert steps["18.2"] == (True, False, ["api-discovery-branch-pipelines", "terraform-templates"])
    assert steps["19.0"] == (False, False, [])
    for step in up["steps"]:  # the indexes name the findings of that step
        assert sorted({report["findings"][i]["rule_id"] for i in step["findings"]}) == step["policies"]


def test_the_plan_in_text(capsys: pytest.CaptureFixture[str]) -> None:
    main(["scan", str(FIXTURE), "--target", "18.0", "--from", "17.5", "--color", "never"])
    text = capsys.readouterr().out
    assert ("Upgrade from GitLab 17.5 to 18.0, stop by stop:\n"
            "    17.8  required stop: nothing found here takes effect\n"
            "   17.11  required stop: nothing found here takes effect\n"
            "    18.0  target: 2 findings take effect: api-discovery-branch-pipelines, terraform-templates\n"
            "\n") in text
    assert "not known yet" not in text  # 18.0 is before GitLab's last listed stop


@pytest.mark.parametrize(("config", "name"), [
    ('from: "16.11"\ntarget: "19.0"\n', ".sunset.yml"),
    ('[tool.sunset]\nfrom = "16.11"\ntarget = "19.0"\n', "pyproject.toml"),
])
def test_from_in_the_configuration_file(tmp_path: Path, capsys: pytest.CaptureFixture[str], config: str,
                                        name: str) -> None:
    (tmp_path / ".gitlab-ci.yml").write_text((FIXTURE / ".gitlab-ci.yml").read_text(encoding="utf-8"),
                                             encoding="utf-8")
    (tmp_path / name).write_text(config, encoding="utf-8")
    main(["scan", str(tmp_path), "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert (report["from"], report["target"]) == ("16.11", "19.0")
    assert _by_rule(report)["ci-build-variables"][0] == "info"
    main(["scan", str(tmp_path), "--format", "json", "--from", "15.0"])  # the flag wins
    assert json.loads(capsys.readouterr().out)["from"] == "15.0"


def test_bad_from_values_are_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scan", str(FIXTURE), "--from", "sixteen"]) == 2
    assert "--from: not a GitLab release (MAJOR.MINOR): 'sixteen'" in capsys.readouterr().err
    assert main(["scan", str(FIXTURE), "--from", "19.0", "--target", "18.0"]) == 2
    assert "--from 19.0 is not before the target 18.0: nothing to upgrade" in capsys.readouterr().err
    (tmp_path / ".sunset.yml").write_text("from: 16.10\n", encoding="utf-8")
    assert main(["scan", str(tmp_path), "--config", str(tmp_path / ".sunset.yml")]) == 2
    assert ('.sunset.yml:1: from: 16.10 is a number (read as 16.1), not a release; write it as a string: '
            'from: "16.10"') in capsys.readouterr().err


def test_gitlab_url_reads_the_release_the_instance_runs(monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """A real HTTP server on 127.0.0.1 answers `GET /api/v4/version` as GitLab does."""
    monkeypatch.setenv("SUNSET_GITLAB_TOKEN", TOKEN)
    monkeypatch.delenv("CI_JOB_TOKEN", raising=False)
    inst = Instance(version="17.5.2-ee")
    with StandIn(inst) as url:
        code, report = _json(capsys, "--gitlab", url, "--target", "18.0")
        assert inst.log == [("GET", "/api/v4/version")]  # the one request it makes
        assert (code, report["from"], [s["release"] for s in report["upgrade"]["steps"]]) == (
            1, "17.5", ["17.8", "17.11", "18.0"])
        monkeypatch.setenv("SUNSET_GITLAB_TOKEN", "glpat-wrong")
        assert main(["scan", str(FIXTURE), "--gitlab", url]) == 2
        assert "--gitlab: GET /api/v4/version: 401 Unauthorized (the token was refused)" in capsys.readouterr().err
        monkeypatch.delenv("SUNSET_GITLAB_TOKEN")
        monkeypatch.setenv("CI_JOB_TOKEN", TOKEN)  # inside a job
        assert _json(capsys, "--gitlab", url, "--target", "18.0")[1]["from"] == "17.5"
        monkeypatch.delenv("CI_JOB_TOKEN")
        assert main(["scan", str(FIXTURE), "--gitlab", url]) == 2
        assert "needs an access token in SUNSET_GITLAB_TOKEN" in capsys.readouterr().err
        assert main(["scan", str(FIXTURE), "--gitlab", url, "--from", "16.11", "--target", "18.0"]) == 1
        capsys.readouterr()
        assert len(inst.log) == 3  # with --from given, nothing is asked


def test_an_answer_that_is_not_gitlabs_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    inst = Instance(version="nightly")
    with StandIn(inst) as url:
        with pytest.raises(VersionError, match="GitLab answered version 'nightly', not a release"):
            instance_release(url, {"SUNSET_GITLAB_TOKEN": TOKEN})
        with pytest.raises(VersionError, match="GET /api/v4/version: 404"):
            instance_release(url + "/nowhere", {"SUNSET_GITLAB_TOKEN": TOKEN})
    with pytest.raises(VersionError, match="is not an http"):
        instance_release("gitlab.example.com", {"SUNSET_GITLAB_TOKEN": TOKEN})


@given(st.integers(0, 99), st.integers(0, 99), st.integers(0, 99), st.sampled_from(["", "-ee", "-pre", "+rc1"]))
def test_release_of_reads_gitlab_versions(major: int, minor: int, patch: int, suffix: str) -> None:
    assert release_of(f"{major}.{minor}.{patch}{suffix}") == f"{major}.{minor}"


@given(st.text(max_size=30))
def test_release_of_refuses_anything_else_with_its_own_error(text: str) -> None:
    try:
        result = release_of(text)
    except VersionError:
        return
    assert Version.parse(result) is not None


def test_the_plan_in_html(capsys: pytest.CaptureFixture[str]) -> None:
    main(["scan", str(FIXTURE), "--target", "18.0", "--from", "17.5", "--format", "html"])
    html = capsys.readouterr().out
    assert "<h2>Upgrade from GitLab 17.5, stop by stop</h2>" in html
    assert ("<tr><td>17.11</td><td>required stop</td><td>0</td><td></td></tr>"
            "<tr><td>18.0</td><td>target</td><td>2</td><td>api-discovery-branch-pipelines, terraform-templates</td>"
            "</tr></table>") in html
