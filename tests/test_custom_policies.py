"""docs/custom-policies.md, run: the worked example's policy, pipeline and output taken from the page;
`sunset policies check` reporting every problem of every file; a local `origin` shown in every output."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from scanner.cli import main

from conftest import ROOT

DOC = ROOT / "docs" / "custom-policies.md"


def section(title: str) -> str:
    return DOC.read_text(encoding="utf-8").split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def blocks(title: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", section(title), re.S)


def commands(title: str) -> dict[str, list[str]]:
    """Each `$ command` of the section's console blocks with the lines it printed."""
    out: dict[str, list[str]] = {}
    for block in blocks(title, "console"):
        current = ""
        for line in block.splitlines():
            if line.startswith("$ "):
                current = line[2:]
                out[current] = []
            else:
                out[current].append(line)
    return out


@pytest.fixture
def example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    policy, pipeline = blocks("A worked example", "yaml")
    (tmp_path / "ci-policies").mkdir()
    (tmp_path / "ci-policies" / "acme-node-16-image.yaml").write_text(policy, encoding="utf-8")
    (tmp_path / ".gitlab-ci.yml").write_text(pipeline, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], command: str) -> tuple[int, list[str]]:
    """A documented command line, run; stdout and stderr lines together, as a terminal shows them."""
    args = command.split()
    assert args[0] == "sunset"
    capsys.readouterr()
    code = main([*args[1:], "--color", "never"] if args[1] == "scan" else args[1:])
    out, err = capsys.readouterr()
    return code, (out + err).splitlines()


def test_the_worked_example(example: Path, capsys: pytest.CaptureFixture[str]) -> None:
    documented = commands("A worked example")
    assert list(documented) == ["sunset policies check ci-policies",
                                "sunset scan . --policies ci-policies --target 18.0"]
    for command, lines in documented.items():
        code, shown = run(capsys, command)
        assert shown == lines, command
        assert code == (1 if " scan " in command else 0)
    code, shown = run(capsys, "sunset scan . --policies ci-policies --target 17.0")
    assert shown[0].startswith(".gitlab-ci.yml:9:5: warning[acme-node-16-image] ")  # the image still exists at 17.0


def test_the_origin_shows_in_every_output(example: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scan", ".", "--policies", "ci-policies", "--format", "json", "--select", "acme-"]) == 1
    (finding,) = json.loads(capsys.readouterr().out)["findings"]
    assert (finding["rule_id"], finding["origin"]) == ("acme-node-16-image", "acme")
    assert main(["scan", ".", "--policies", "ci-policies", "--format", "sarif", "--select", "ci-policies"]) == 1
    (rule,) = json.loads(capsys.readouterr().out)["runs"][0]["tool"]["driver"]["rules"]
    assert (rule["properties"]["origin"], rule["properties"]["tags"][0]) == ("acme", "local")
    assert main(["policies", "list", "--policies", "ci-policies"]) == 0
    (line,) = [x for x in capsys.readouterr().out.splitlines() if x.startswith("acme-")]
    assert line.endswith("ACME's `ci/node:16` build image is retired  [acme]")
    assert main(["policies", "list", "--policies", "ci-policies", "--format", "json"]) == 0
    rows = {r["id"]: r["origin"] for r in json.loads(capsys.readouterr().out)}
    assert (rows["acme-node-16-image"], rows["ci-job-jwt-variables"]) == ("acme", "gitlab")
    assert main(["policies", "show", "acme-node-16-image", "--policies", "ci-policies"]) == 0
    assert "| Origin | acme: a local policy, not one of GitLab’s |" in capsys.readouterr().out


def test_policies_check_reports_every_problem_of_every_file(example: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The page's broken folder, made as it says: the worked example with a short title, an origin with
    a `!` and an unknown key; a file that lost a closing brace; three good files."""
    folder = example / "ci-policies"
    good = (folder / "acme-node-16-image.yaml").read_text(encoding="utf-8")
    for name in ("acme-node-14-image", "acme-node-18-image", "acme-python-38-image"):
        (folder / f"{name}.yaml").write_text(good, encoding="utf-8")
    bad = (good.replace("title: \"ACME's `ci/node:16` build image is retired\"", 'title: "Old"')
           .replace("origin: acme            # not GitLab's: every report says so", "origin: ACME Platform Team!")
           .replace("applies_to: [gitlab-ci]", "colour: red\napplies_to: [gitlab-ci]"))
    assert bad.count("\n") == good.count("\n") + 1
    (folder / "acme-node-16-image.yaml").write_text(bad, encoding="utf-8")
    (folder / "old-runner.yaml").write_text("title: Old runner image\nsummary: The old runner image is retired.\n"
                                            "match: {kind: command, programs: [old-runner]\n", encoding="utf-8")
    (command, lines), = commands("Checking them: `sunset policies check`").items()
    code, shown = run(capsys, command)
    assert (code, shown) == (2, lines)


def test_an_id_used_twice_is_a_problem(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                       example: Path) -> None:
    policy = (example / "ci-policies" / "acme-node-16-image.yaml").read_text(encoding="utf-8")
    (example / "ci-policies" / "team").mkdir()
    (example / "ci-policies" / "team" / "acme-node-16-image.yaml").write_text(policy, encoding="utf-8")
    (example / "ci-policies" / "terraform-templates.yaml").write_text(policy, encoding="utf-8")
    assert main(["policies", "check", "ci-policies"]) == 2
    out = capsys.readouterr().out.splitlines()
    assert out[0] == ("ci-policies/team/acme-node-16-image.yaml:1: id: duplicate policy id 'acme-node-16-image' "
                      "(also ci-policies/acme-node-16-image.yaml)")
    assert out[1].startswith("ci-policies/terraform-templates.yaml:1: id: duplicate policy id 'terraform-templates' "
                             "(also ") and out[1].endswith("policies/ci/terraform-templates.yaml)")
    assert len(out) == 2
    assert main(["policies", "check", "no-such-folder"]) == 2
    assert capsys.readouterr().err == "sunset: no-such-folder: policy directory does not exist\n"
