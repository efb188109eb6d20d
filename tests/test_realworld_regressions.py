"""What the real-world check (docs/research/realworld-check.md) found wrong, each reproduced with a
fixture written here and asserted to exact positions."""

from __future__ import annotations

from pathlib import Path

from conftest import sunset


def _concise(folder: Path) -> list[str]:
    """`sunset scan FOLDER --format concise --target 20.0` in a child with a time limit: the shell
    bug below made a scan loop for ever, growing without bound."""
    done = sunset("scan", folder, "--format", "concise", "--target", "20.0", "--color", "never", cwd=folder,
                  process=True, timeout=60)
    assert done.returncode in (0, 1), done.stderr[-500:]
    return done.stdout.splitlines()


def test_ampersand_redirections_and_pipe_ampersand_do_not_stop_the_scan(tmp_path: Path) -> None:
    """`&>/dev/null` and `|&` (seen in a public GitLab API script) made the shell tokenizer read an
    empty word at the same place for ever; `&>file` and `2>&1` are words, `|&` is a pipe."""
    (tmp_path / "register.sh").write_text(
        '#!/bin/sh\ncurl -s "$CI_API_V4_URL/version" &>/dev/null || :\n'
        'gitlab-runner register --registration-token "$TOKEN" |& tee register.log\n')
    (tmp_path / ".gitlab-ci.yml").write_text(
        'job:\n  script:\n    - curl -s "$URL" &>/dev/null\n    - echo "$CI_BUILD_REF" 2>&1 |& tee out.log\n')
    out = _concise(tmp_path)
    assert [line.split(" ", 2)[0:2] for line in out[:-1]] == [
        [".gitlab-ci.yml:4:13:", "error[ci-build-variables]"],
        ["register.sh:3:24:", "warning[runner-registration-token]"],  # pending (GitLab's record)
    ]
    assert "0 input error(s)" in out[-1]


def test_shell_words_around_ampersands() -> None:
    from scanner.readers.shell import ScriptText, commands

    def words(text: str) -> list[list[str]]:
        return [[w.text for w in c] for c in commands(ScriptText(text, ((1, 1),)))]

    assert words("curl -X DELETE &>/dev/null || :") == [["curl", "-X", "DELETE", "&>/dev/null"], [":"]]
    assert words("a |& b") == [["a"], ["b"]]
    assert words("x 2>&1 | y") == [["x", "2>&1"], ["y"]]
    assert words("sleep 1 & wait") == [["sleep", "1"], ["wait"]]
    assert words("c <&3 &>>log") == [["c", "<&3", "&>>log"]]


def test_runner_chart_config_with_template_actions_is_read_without_input_errors(tmp_path: Path) -> None:
    """The runner chart renders `runners.config` with `tpl`: Go template actions in the TOML (a
    public chart's values had eleven lines of them) were input errors; now the settings around
    them are read, at their exact positions."""
    (tmp_path / "values.yaml").write_text(
        "gitlabUrl: https://gitlab.example.com/\n"
        "runners:\n"
        "  config: |\n"
        "    [[runners]]\n"
        '      url = "{{ .Values.gitlabUrl }}"\n'
        "    {{- if .Values.windows }}\n"
        '      shell = "cmd"\n'
        '      image = "{{ printf "%s:%s" .Values.image.name .Values.image.tag }}"\n'
        "    {{- end }}\n"
        "      [runners.kubernetes]\n"
        "        cpu_limit = {{ .Values.cpuLimit | quote }}\n"
        '        allowed_pull_policies = [{{ range $i, $v := .Values.p }}{{ if $i }}, {{ end }}"{{ $v }}"{{ end }}]\n'
        "        {{- toToml .Values.extra | nindent 8 }}\n")
    out = _concise(tmp_path)
    assert [line.split(" ", 2)[0:2] for line in out[:-1]] == [["values.yaml:7:7:", "error[runner-cmd-shell]"]]
    assert "0 input error(s)" in out[-1]


def test_runner_chart_config_template_stand_ins_keep_every_position() -> None:
    from scanner.readers.settings.parsers import parse_helm_values

    text = ("runners:\n  config: |\n    [[runners]]\n    {{- if .Values.a }}\n"
            '      executor = "kubernetes"\n    {{- end }}\n      limit = {{ .Values.limit }}\n'
            '      image = "{{ printf "%s:%s" .Values.a .Values.b }}"\n')
    tree = parse_helm_values(text)
    assert tree.warnings == []
    runner = tree.roots[0]["runners"]["config"]["runners"][0]
    assert runner["executor"] == "kubernetes"
    assert tree.table[id(runner)]["executor"] == ((5, 7, 5, 15), (5, 18, 5, 30))
    assert tree.table[id(runner)]["limit"][0] == (7, 7, 7, 12)
    # the template text comes back in the values (as the templated YAML reader gives it)
    assert (runner["limit"], runner["image"]) == ("{{ .Values.limit }}", '{{ printf "%s:%s" .Values.a .Values.b }}')
