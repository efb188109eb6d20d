"""Settings you can see: `[tool.sunset.*]` found through TOML, `--show-settings` (each value and where it
came from), `--show-files` (what is read as which kind, what is skipped and why), policy selectors
(ids, id prefixes, groups) for `scan` and `fix`, and `fix`'s own flags."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scanner.cli import main
from scanner.engine.discovery import has_tool_table, toml_key_lines
from scanner.engine.select import choose
from scanner.rules.policy import Policy

from conftest import examples

CI = "include:\n  - template: Terraform.gitlab-ci.yml\n"
SCRIPT = '#!/bin/sh\ngitlab-runner register --url https://gitlab.example.com --registration-token "$TOKEN"\n'
NOTES = ('import gitlab\n\ngl = gitlab.Gitlab("https://gitlab.example.com")\n'
         'for mr in gl.projects.get(1).mergerequests.list(state="merged", iterator=True):\n'
         '    print(mr.title, mr.merged_by["username"])\n')
DAST = ("include:\n  - template: DAST.gitlab-ci.yml\n\ndast:\n  variables:\n"
        "    DAST_TARGET_URL: https://staging.example.com\n    DAST_CRAWL_EXTRACT_ELEMENT_TIMEOUT: 5s\n")


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = write(tmp_path / "repo", {".git/HEAD": "ref: refs/heads/main\n", ".gitlab-ci.yml": CI,
                                     "scripts/register.sh": SCRIPT, "README.md": "# a project\n"})
    monkeypatch.chdir(root)
    return root


def findings(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[tuple[str, str, int, int]]]:
    capsys.readouterr()
    code = main(["scan", *args, "--format", "json"])
    out = capsys.readouterr().out
    return code, [(f["rule_id"], f["path"], f["line"], f["column"]) for f in json.loads(out)["findings"]]


TERRAFORM = ("terraform-templates", ".gitlab-ci.yml", 2, 15)
RUNNER = ("runner-registration-token", "scripts/register.sh", 2, 57)


@pytest.mark.parametrize("toml", [
    '[project]\nname = "x"\n\n[tool.sunset.policies]\nignore = ["terraform-templates"]\n',
    'tool.sunset.policies.ignore = ["terraform-templates"]\n\n[project]\nname = "x"\n',
    '[tool]\nsunset = { policies = { ignore = ["terraform-templates"] } }\n',
])
def test_a_tool_sunset_subtable_alone_is_the_configuration(
    repo: Path, capsys: pytest.CaptureFixture[str], toml: str
) -> None:
    (repo / "pyproject.toml").write_text(toml, encoding="utf-8")
    assert findings(capsys, ".") == (1, [RUNNER])
    assert findings(capsys, "scripts") == (1, [RUNNER])  # found from the working directory


def test_a_tool_sunset_header_inside_a_string_is_no_configuration(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "pyproject.toml").write_text('[project]\nname = "x"\ndescription = """\n[tool.sunset]\n"""\n',
                                         encoding="utf-8")
    assert findings(capsys, ".") == (1, [TERRAFORM, RUNNER])


def test_problems_in_a_subtable_name_their_line(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.sunset.policies]\nignore = [\n'
                                         '  "terraform-templates",\n]\nselect = ["runnr"]\n', encoding="utf-8")
    assert main(["scan", "."]) == 2
    assert capsys.readouterr().err == (
        f"sunset: {repo / 'pyproject.toml'}:8: policies.select: 'runnr' is no policy id, id prefix or group "
        "(groups: agent, api, ci, other, runner, security, settings); see `sunset policies list`\n")
    (repo / "pyproject.toml").write_text('[tool.sunset]\ntarget = "18.0"\n[tool.sunset.severity]\n'
                                         'terraform-templates = "fatal"\n', encoding="utf-8")
    assert main(["scan", "."]) == 2
    assert capsys.readouterr().err.startswith(f"sunset: {repo / 'pyproject.toml'}:4: severity.terraform-templates: "
                                              "Input should be 'error', 'warning' or 'info'")
    (repo / "pyproject.toml").write_text('[tool.sunset]\ntarget = "18.0\n', encoding="utf-8")
    assert main(["scan", "."]) == 2
    assert capsys.readouterr().err.startswith(f"sunset: {repo / 'pyproject.toml'}:2: invalid TOML: ")


def test_show_settings_says_where_each_value_came_from(
    repo: Path, capsys: pytest.CaptureFixture[str], policies: list[Policy]
) -> None:
    (repo / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.sunset]\ntarget = "18.0"\nexclude = ["docs/"]\n\n'
        '[tool.sunset.policies]\nignore = ["graphql"]\n', encoding="utf-8")
    assert main(["scan", "--show-settings", "--fail-on", "error", "--extend-exclude", "build/", "--select",
                 "ci,runner"]) == 0
    chosen, total = len(choose(policies, ["ci", "runner"], ["graphql"])), len(policies)
    assert 0 < chosen < total
    rows = [
        ("configuration", "pyproject.toml", "found from the working directory"),
        ("policies", f"{total} loaded (built in)", "default"),
        ("target", "18.0", "pyproject.toml:5"),
        ("fail_on", "error", "--fail-on"),
        ("select", "ci, runner", "--select"),
        ("ignore", "graphql", "pyproject.toml:9"),
        ("selected", f"{chosen} of {total} policies", "select less ignore"),
        ("from", "none", "default"),
        ("baseline", "none", "default"),
        ("severity", "none", "default"),
        ("exclude", "docs/", "pyproject.toml:6"),
        ("extend_exclude", "build/", "--extend-exclude"),
        ("kinds", "none", "default"),
        ("ci_config_path", "none", "default"),
        ("max_file_size", "2097152 bytes", "default"),
    ]
    width = max(len(v) for _, v, _ in rows)
    assert capsys.readouterr().out == (
        "sunset scan settings (a flag wins over the configuration file, the file over the default):\n\n"
        + "".join(f"{name:<14}  {value:<{width}}  ({origin})\n" for name, value, origin in rows))
    assert main(["scan", "--show-settings", "--config", "missing.yml"]) == 2


def test_show_settings_without_a_configuration_file(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    assert main(["scan", "--show-settings", "--target", "17"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[2].split(None, 2) == ["configuration", "none", "(none found: no .sunset.yml and no pyproject.toml "
                                       "with [tool.sunset] in the working directory, the scanned folder, or their "
                                       "parents up to the repository root)"]
    assert lines[4].split() == ["target", "17.0", "(--target)"]
    assert lines[5].split() == ["fail_on", "warning", "(default)"]


def test_show_files_lists_what_is_read_and_what_is_skipped(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(repo, {".gitlab-ci.yml": CI + "  - local: ci/*.yml\n", "ci/build.yml": "build:\n  script: [make]\n",
                 "vendor/.gitlab-ci.yml": CI, "node_modules/x/.gitlab-ci.yml": CI,
                 ".sunset.yml": "exclude: ['vendor/']\n", "big/config.toml": "[[runners]]\n" + "#" * 300 + "\n"})
    assert main(["scan", "--show-files", "--max-file-size", "100", "."]) == 0
    assert capsys.readouterr().out == (
        "skipped  .git/                  a version control, dependency or cache folder: not entered\n"
        "read     .gitlab-ci.yml         gitlab-ci: pipeline root\n"
        "skipped  .sunset.yml            no GitLab file kind fits it\n"
        "skipped  README.md              no GitLab file kind fits it\n"
        "skipped  big/config.toml        file is 313 bytes, over the 100-byte limit; not scanned\n"
        "read     ci/build.yml           gitlab-ci: included by .gitlab-ci.yml:3\n"
        "skipped  node_modules/          a version control, dependency or cache folder: not entered\n"
        "read     scripts/register.sh    shell-script\n"
        "skipped  vendor/.gitlab-ci.yml  excluded by `vendor/`\n"
        "\n"
        "3 file(s) read, 6 skipped.\n")


def test_selectors_take_ids_prefixes_and_groups(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(repo, {"tools/notes.py": NOTES})
    merged = ("rest-mr-merged-by", "tools/notes.py", 5, 24)
    assert findings(capsys, ".", "--select", "runner") == (1, [RUNNER])  # the group policies/runner/
    assert findings(capsys, ".", "--select", "rest-") == (1, [merged])  # an id prefix
    assert findings(capsys, ".", "--select", "rest-mr") == (1, [merged])  # a prefix ending at a dash
    assert findings(capsys, ".", "--select", "api,terraform-templates") == (1, [TERRAFORM, merged])
    assert findings(capsys, ".", "--ignore", "terraform", "--ignore", "api") == (1, [RUNNER])
    (repo / ".sunset.yml").write_text("policies:\n  select: [ci, rest-mr]\n  ignore: [terraform]\n", encoding="utf-8")
    assert findings(capsys, ".") == (1, [RUNNER, merged])  # the ci group holds runner-registration-token
    for flag in ("--select", "--ignore"):
        assert main(["scan", ".", flag, "rest-mr-merg"]) == 2  # a prefix ends at a dash: no `rest-mr-merg-…`
        assert capsys.readouterr().err == (
            f"sunset: {flag}: 'rest-mr-merg' is no policy id, id prefix or group (groups: agent, api, ci, other, "
            "runner, security, settings); see `sunset policies list`\n")


def _fixed(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[tuple[str, str]], str]:
    capsys.readouterr()
    code = main(["fix", ".", "--diff", *args])
    out, err = capsys.readouterr()
    lines = [line for line in err.splitlines() if ": would fix [" in line]
    return code, sorted((line.split(":")[0], line.split("[")[1].split("]")[0]) for line in lines), err


def test_fix_takes_select_ignore_exclude_and_target(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(repo, {".gitlab-ci.yml": DAST, "tools/notes.py": NOTES, "vendor/notes.py": NOTES})
    dast = (".gitlab-ci.yml", "dast-crawl-element-timeout-variables")
    tools, vendor = ("tools/notes.py", "rest-mr-merged-by"), ("vendor/notes.py", "rest-mr-merged-by")
    assert _fixed(capsys)[:2] == (1, [dast, tools, vendor])
    assert _fixed(capsys, "--select", "api")[:2] == (1, [tools, vendor])
    assert _fixed(capsys, "--ignore", "rest-")[:2] == (1, [dast])
    assert _fixed(capsys, "--exclude", "vendor/")[:2] == (1, [dast, tools])
    code, fixed, err = _fixed(capsys, "--target", "18.0")  # only what breaks there; merged_by has no removal date
    assert (code, fixed) == (1, [dast])
    assert "; 2 not breaking at GitLab 18.0 left alone" in err.splitlines()[-1]
    assert _fixed(capsys, "--select", "nothing-like-it")[0] == 2
    (repo / ".sunset.yml").write_text("policies:\n  ignore: [api]\n", encoding="utf-8")
    (repo / "tools").mkdir(exist_ok=True)
    capsys.readouterr()
    assert main(["fix", "--diff", "."]) == 1  # the configuration above the working directory: as `scan` finds it
    assert [line.split(":")[0] for line in capsys.readouterr().err.splitlines() if ": would fix [" in line] == [
        ".gitlab-ci.yml"]


def test_fix_honours_the_configuration_file_as_scan_does_and_a_flag_wins(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`target:` narrows the fixes to what breaks there (what the scan's exit status counts), `policies:`
    and `exclude:` choose as they do for `scan`; each flag wins over the file."""
    write(repo, {".gitlab-ci.yml": DAST, "tools/notes.py": NOTES, "vendor/notes.py": NOTES})
    dast = (".gitlab-ci.yml", "dast-crawl-element-timeout-variables")  # removed in 18.0
    tools, vendor = ("tools/notes.py", "rest-mr-merged-by"), ("vendor/notes.py", "rest-mr-merged-by")  # not dated
    config = repo / ".sunset.yml"
    config.write_text('target: "18.0"\n', encoding="utf-8")
    code, fixed, err = _fixed(capsys)
    assert (code, fixed) == (1, [dast])
    assert err.splitlines()[-1] == ("sunset fix: would fix 1 finding(s) in 1 file(s); 1 finding(s) have no automatic "
                                    "fix; 2 not breaking at GitLab 18.0 left alone.")
    config.write_text('target: "17.0"\n', encoding="utf-8")  # DAST's variable still works on 17.0
    assert _fixed(capsys)[:2] == (0, [])
    assert _fixed(capsys, "--target", "18.0")[:2] == (1, [dast])
    config.write_text("policies:\n  select: [api]\nexclude: [vendor/]\n", encoding="utf-8")
    assert _fixed(capsys)[:2] == (1, [tools])  # no target: every fixable finding the selection reports
    assert _fixed(capsys, "--exclude", "tools/")[:2] == (1, [vendor])
    assert _fixed(capsys, "--select", "ci")[:2] == (1, [dast])
    assert _fixed(capsys, "--ignore", "api")[0] == 0  # --ignore adds to the file's ignore; nothing is left


def test_fix_shows_its_settings(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(repo, {".gitlab-ci.yml": DAST, ".sunset.yml": 'fail_on: error\ntarget: "18.0"\nexclude: [vendor/]\n'})
    before = (repo / ".gitlab-ci.yml").read_text(encoding="utf-8")
    capsys.readouterr()
    assert main(["fix", "--show-settings"]) == 0
    out = capsys.readouterr().out
    assert (repo / ".gitlab-ci.yml").read_text(encoding="utf-8") == before  # nothing fixed
    rows = {line.split()[0]: line for line in out.splitlines()[2:]}
    assert out.splitlines()[0] == ("sunset fix settings (a flag wins over the configuration file, the file over "
                                   "the default):")
    assert rows["target"].split() == ["target", "18.0", "(.sunset.yml:2)"]
    assert rows["exclude"].split() == ["exclude", "vendor/", "(.sunset.yml:3)"]
    assert rows["fixes"].split() == ["fixes", "only", "what", "breaks", "on", "18.0", "(.sunset.yml:2)"]
    assert "fail_on" not in rows  # fix's exit status does not depend on severities
    assert main(["fix", "--show-settings", "--target", "17", "--unsafe"]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()[2:]}
    assert rows["fixes"].split() == ["fixes", "only", "what", "breaks", "on", "17.0,", "and", "--unsafe", "ones",
                                     "(--target)"]
    (repo / ".sunset.yml").unlink()
    assert main(["fix", "--show-settings"]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()[2:]}
    assert " ".join(rows["fixes"].split()) == "fixes every finding a policy can fix (default: no target given)"


def test_fix_and_scan_say_the_same_about_where_the_configuration_is(capsys: pytest.CaptureFixture[str]) -> None:
    helps = []
    for command in ("scan", "fix"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        helps.append(text[text.rindex("--config FILE "):].split(" --", 1)[0])
    assert helps[0] == helps[1]
    assert "pyproject.toml with a tool.sunset table" in helps[0] and "repository root" in helps[0]


KEY = st.from_regex(r"[a-z][a-z0-9_-]{0,8}", fullmatch=True)
VALUE = st.one_of(st.integers(-5, 5), st.text(max_size=12), st.lists(st.text(max_size=5), max_size=3))


@settings(max_examples=examples(200), deadline=None)
@given(st.dictionaries(KEY, st.one_of(VALUE, st.dictionaries(KEY, VALUE, min_size=1, max_size=3)), max_size=5),
       st.sampled_from(["tables", "dotted", "inline"]))
def test_toml_positions_name_the_line_each_key_is_written_on(table: dict[str, object], style: str) -> None:
    """Whatever the `tool.sunset` table holds and however it is written, discovery agrees with tomllib
    and every key's line is the line that key is written on."""
    import tomllib

    def value(v: object) -> str:
        if isinstance(v, str):  # a TOML basic string: everything but printable ASCII escaped
            return '"' + "".join(c if " " <= c <= "~" and c not in '"\\' else f"\\U{ord(c):08x}" for c in v) + '"'
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return str(v)

    def inline(d: dict[str, object]) -> str:
        return "{ " + ", ".join(f"{k} = {inline(v) if isinstance(v, dict) else value(v)}" for k, v in d.items()) + " }"

    lines = ['[project]', 'name = "x"']
    if style == "tables":
        lines.append("[tool.sunset]")
        lines += [f"{k} = {value(v)}" for k, v in table.items() if not isinstance(v, dict)]
        for k, v in table.items():
            if isinstance(v, dict):
                lines += [f"[tool.sunset.{k}]", *(f"{kk} = {value(vv)}" for kk, vv in v.items())]
    elif style == "dotted":
        lines = [f"tool.sunset.{k}.{kk} = {value(vv)}" for k, v in table.items() if isinstance(v, dict)
                 for kk, vv in v.items()] + [f"tool.sunset.{k} = {value(v)}" for k, v in table.items()
                                             if not isinstance(v, dict)] + lines
    else:
        lines += ["[tool]", f"sunset = {inline(table)}"]
    text = "\n".join(lines) + "\n"
    data = tomllib.loads(text)
    assert data.get("tool", {}).get("sunset", {} if style != "inline" else table) == table
    positions = toml_key_lines(text, ("tool", "sunset"))
    source = text.splitlines()
    for route, line in positions.items():
        assert route[-1] in source[line - 1]
    if style != "inline":
        for k, v in table.items():
            assert (k,) in positions
            for kk in v if isinstance(v, dict) else ():
                assert kk in source[positions[(k, kk)] - 1]


@given(st.text(max_size=200))
def test_discovery_never_fails_on_any_pyproject(tmp_path_factory: pytest.TempPathFactory, text: str) -> None:
    import tomllib

    path = tmp_path_factory.mktemp("p") / "pyproject.toml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        tool = tomllib.loads(text).get("tool")
        expected = isinstance(tool, dict) and "sunset" in tool
    except tomllib.TOMLDecodeError:
        expected = "sunset" in text
    except ValueError:  # a lone surrogate: not UTF-8, read as a problem; it counts when it mentions sunset
        expected = "sunset" in text
    assert has_tool_table(path) is expected
    toml_key_lines(text, ("tool", "sunset"))
