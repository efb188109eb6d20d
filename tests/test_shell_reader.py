"""The shell reader: bash's structure read as bash reads it, in time linear in the script, and no
text makes it fail or place a word outside the script."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scanner.core.document import Document
from scanner.core.tree import Tree
from scanner.readers import ci
from scanner.readers.api.model import GraphqlText, RestCall
from scanner.readers.api.shell.flow import job_uses
from scanner.readers.shell import (
    EXPANSION_FACTOR,
    Command,
    ScriptText,
    Token,
    map_lines,
    read,
    script_file,
    word_chars,
)

from conftest import examples


def _script(text: str) -> ScriptText:
    return ScriptText(text, tuple((n, 1) for n in range(1, text.count("\n") + 2)))


def _words(text: str) -> list[list[tuple[str, int, int]]]:
    return [[(w.text, w.line, w.column) for w in cmd] for cmd in read(_script(text))]


def _texts(text: str) -> list[list[str]]:
    return [[w.text for w in cmd] for cmd in read(_script(text))]


def test_words_follow_bash_quoting() -> None:
    assert _words("echo 'a b'\"c $X\"d\\ e$'f\\tg' h") == [[("echo", 1, 1), ("a bc $Xd ef\tg", 1, 6), ("h", 1, 29)]]
    assert _words("printf '%s\n' \"two\nlines\" done") == [[("printf", 1, 1), ("%s\n", 1, 8), ("two\nlines", 2, 3),
                                                            ("done", 3, 8)]]
    assert _texts("a=(x y) b <(c) d") == [["c"], ["a=(x y)", "b", "<(c)", "d"]]
    assert _texts("cat<<EOF >out 2>&1\nbody\nEOF") == [["cat", "<<EOF", ">out", "2>&1"]]


def test_command_substitutions_are_read_before_their_command() -> None:
    cmds = read(_script('V=$(curl -s "$U" | jq -r .version) # note\necho "`date`" "${A:-$(b)}"'))
    assert [[w.text for w in c] for c in cmds] == [
        ["curl", "-s", "$U"], ["jq", "-r", ".version"], ['V=$(curl -s "$U" | jq -r .version)'],
        ["date"], ["echo", "`date`", "${A:-$(b)}"]]
    assert [c.capture for c in cmds] == [None, "V", None, None, None]
    assert cmds[1].piped_from is cmds[0]
    assert all(c.piped_from is None for c in (cmds[0], cmds[2], cmds[3], cmds[4]))


def test_compound_commands_are_read_through() -> None:
    text = ("if gitlab-ctl status; then\n  gitlab-ctl stop\nelif true; then :; else exit 1; fi\n"
            "for n in $(seq 3); do echo $n; done\n"
            "while read -r l; do echo \"$l\"; done < f\n"
            "case \"$1\" in\n  start|up) run start ;;\n  # a comment\n  *) usage;;\nesac\n"
            "{ a; b; } && ( c | d )\n! e")
    assert _texts(text) == [
        ["gitlab-ctl", "status"], ["gitlab-ctl", "stop"], ["true"], [":"], ["exit", "1"],
        ["seq", "3"], ["echo", "$n"], ["read", "-r", "l"], ["echo", "$l"], ["<", "f"],
        ["run", "start"], ["usage"], ["a"], ["b"], ["c"], ["d"], ["e"]]


def test_heredoc_bodies_are_data_unless_a_shell_reads_them() -> None:
    text = ("cat > notes.txt <<'EOF'\ngitlab-ctl promote-db\ndon't\nEOF\n"
            "ssh geo <<EOF\ngitlab-ctl promote-db\nEOF\n"
            "sudo -u git -H bash <<-EOF\n\tgitlab-rake x\n\tEOF\n"
            "kubectl exec -i toolbox -- sh <<EOF\ngitlab-rake y\nEOF\n"
            "cat > /usr/local/bin/run.sh <<EOF\ngitlab-runner register\nEOF\n"
            "psql <<SQL\nselect 1;\nSQL\n"
            "echo after")
    assert _texts(text) == [
        ["cat", ">", "notes.txt", "<<EOF"],
        ["ssh", "geo", "<<EOF"], ["gitlab-ctl", "promote-db"],
        ["sudo", "-u", "git", "-H", "bash", "<<-EOF"], ["gitlab-rake", "x"],
        ["kubectl", "exec", "-i", "toolbox", "--", "sh", "<<EOF"], ["sh"], ["gitlab-rake", "y"],
        ["cat", ">", "/usr/local/bin/run.sh", "<<EOF"], ["gitlab-runner", "register"],
        ["psql", "<<SQL"],
        ["echo", "after"]]


def test_commands_run_by_other_commands_are_read_at_their_place() -> None:
    text = ("ssh -p 2222 root@geo 'gitlab-ctl promote-db && echo ok'\n"
            "docker compose exec -T -u git web gitlab-rake x\n"
            "bash -lc \"sudo gitlab-ctl reconfigure\"\n"
            "eval \"gitlab-ctl stop; gitlab-ctl start\"\n"
            "kubectl -n gl exec deploy/t -c c -- bash -c 'gitlab-rake y'\n")
    found = [[(w.text, w.line, w.column) for w in c] for c in read(_script(text))][1:]
    assert found == [
        [("gitlab-ctl", 1, 23), ("promote-db", 1, 34)], [("echo", 1, 48), ("ok", 1, 53)],
        [("docker", 2, 1), ("compose", 2, 8), ("exec", 2, 16), ("-T", 2, 21), ("-u", 2, 24), ("git", 2, 27),
         ("web", 2, 31), ("gitlab-rake", 2, 35), ("x", 2, 47)],
        [("gitlab-rake", 2, 35), ("x", 2, 47)],
        [("bash", 3, 1), ("-lc", 3, 6), ("sudo gitlab-ctl reconfigure", 3, 10)],
        [("sudo", 3, 11), ("gitlab-ctl", 3, 16), ("reconfigure", 3, 27)],
        [("eval", 4, 1), ("gitlab-ctl stop; gitlab-ctl start", 4, 6)],
        [("gitlab-ctl", 4, 7), ("stop", 4, 18)], [("gitlab-ctl", 4, 24), ("start", 4, 35)],
        [("kubectl", 5, 1), ("-n", 5, 9), ("gl", 5, 12), ("exec", 5, 15), ("deploy/t", 5, 20), ("-c", 5, 29),
         ("c", 5, 32), ("--", 5, 34), ("bash", 5, 37), ("-c", 5, 42), ("gitlab-rake y", 5, 45)],
        [("bash", 5, 37), ("-c", 5, 42), ("gitlab-rake y", 5, 45)],
        [("gitlab-rake", 5, 46), ("y", 5, 58)]]


def test_a_function_call_is_its_body_with_the_arguments_written_in() -> None:
    text = ('api() { curl -H "T: $T" "$@"; }\n'
            "function put {\n  api -X PUT \"$1\" --data \"$2\"\n}\n"
            "put \"$BASE/x\" a=1\n"
            'first() { echo "$1"; }\n'
            "first\n")
    cmds = read(_script(text))
    assert [[(w.text, w.line, w.column) for w in c] for c in cmds] == [
        [("curl", 1, 9), ("-H", 1, 14), ("T: $T", 1, 17), ("$@", 1, 25)],
        [("api", 3, 3), ("-X", 3, 7), ("PUT", 3, 10), ("$1", 3, 14), ("--data", 3, 19), ("$2", 3, 26)],
        [("curl", 1, 9), ("-H", 1, 14), ("T: $T", 1, 17), ("-X", 3, 7), ("PUT", 3, 10), ("$1", 3, 14),
         ("--data", 3, 19), ("$2", 3, 26)],
        [("put", 5, 1), ("$BASE/x", 5, 5), ("a=1", 5, 15)],
        [("api", 3, 3), ("-X", 3, 7), ("PUT", 3, 10), ("$BASE/x", 5, 5), ("--data", 3, 19), ("a=1", 5, 15)],
        [("curl", 1, 9), ("-H", 1, 14), ("T: $T", 1, 17), ("-X", 3, 7), ("PUT", 3, 10), ("$BASE/x", 5, 5),
         ("--data", 3, 19), ("a=1", 5, 15)],
        [("echo", 6, 11), ("$1", 6, 16)],
        [("first", 7, 1)],
        [("echo", 6, 11)]]  # `$1` of a call without arguments is empty


def test_a_word_built_from_an_argument_is_placed_at_the_call() -> None:
    cmds = read(_script('get() { curl "$API/projects/$1/x"; }\nget 42\n'))
    built = cmds[-1][1]
    assert (built.text, built.line, built.column) == ("$API/projects/42/x", 2, 5)
    assert word_chars(built)[1] == ((2, 5),) * 14 + ((2, 5), (2, 6)) + ((2, 5),) * 2


# Linear time: each family of crafted input, at a size where a reader quadratic in it would run for
# minutes, is read within a generous budget of CPU time (this test bounds the work, it does not
# measure speed: bench/ does that).

BUDGET = 5.0  # seconds of CPU time
_WRAPPERS = 'f0() { curl "$@" "$CI_API_V4_URL/runners/1"; }\n' + "".join(
    f'f{i}() {{ f{i - 1} "$@"; f{i - 1} "$@"; f{i - 1} "$@"; }}\n' for i in range(1, 40))
FAMILIES: dict[str, str] = {
    "heredoc body fed to cat": "cat <<EOF > x\n" + "line $HOME 'quote\n" * 40_000 + "EOF\n",
    "heredoc body fed to bash": "bash <<EOF\n" + "gitlab-ctl status\n" * 20_000 + "EOF\n",
    "unterminated heredoc": "cat <<EOF\n" + "x\n" * 100_000,
    "finding line repeated": 'curl -X PUT --form "active=false" "$CI_API_V4_URL/runners/$ID"\n' * 6_000,
    "one quote left open": '"' + "curl $CI_API_V4_URL/x\n" * 20_000,
    "a quote left open on every line": 'curl "$CI_API_V4_URL/x\n' * 20_000,
    "nested $(": "$(" * 50_000,
    "nested backticks": "`\\`" * 30_000,
    "nested ${": "${" * 50_000,
    "quoted $(": '"$(' * 50_000,
    "redirections": "a" + "<" * 200_000,
    "parentheses": "(" * 200_000,
    "case patterns": "case x in\n" + "a) b;;\n" * 30_000 + "esac\n",
    "function definitions": "".join(f'f{i}() {{ g "$@"; }}\n' for i in range(15_000)) + "f1 x\n",
    "wrappers of wrappers": _WRAPPERS + "f39 -X PUT\n" * 100,
    "heredoc operators": "cat " + "<<EOF " * 20_000 + "\n" + "EOF\n" * 20_000,
    "ssh in ssh": "ssh h '" + "ssh h \"ssh h 'x'\" " * 10_000 + "'",
    "positional parameters": 'f() { curl "' + "$1" * 20_000 + '"; }\n' + "f " + "a" * 1000 + "\n",
    "arguments": 'f() { curl "$@"; }\n' + "f " + "$CI_API_V4_URL/x " * 20_000 + "\n",
    "calls": 'f() { curl "$@"; }\n' + 'f "$CI_API_V4_URL/runners/1"\n' * 10_000,
    "variables doubling": "A=$CI_API_V4_URL\n" + "A=$A$A\n" * 2_000 + 'curl "$A/runners"\n',
    "a long line": "curl " + "https://gitlab.example.com/-/jwks " * 20_000 + "\n",
}


def _uses(text: str) -> list[RestCall | GraphqlText]:
    script = _script(text)
    doc = Document("a.sh", Path("a.sh"), "shell-script", text, Tree(roots=[text], root_spans=[(1, 1, 1, 1)]))
    item = ci.ScriptItem(text, (0,), (0,))
    return [use for _, use in job_uses(doc, [(cmd, item) for cmd in read(script)], {(0,): script})]


def _cpu(work: Callable[[], object]) -> float:
    start = time.process_time()
    work()
    return time.process_time() - start


@pytest.mark.slow
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_crafted_scripts_are_read_in_bounded_work(family: str) -> None:
    text = FAMILIES[family]
    assert _cpu(lambda: _uses(text)) < BUDGET
    words = sum(len(w.text) + 1 for cmd in read(_script(text)) for w in cmd)
    assert words <= (EXPANSION_FACTOR + 2) * (len(text) + 64)


# Properties: any text in, no exception out; every word, character and call inside the input.

_PIECES = ["curl ", "-X PUT ", "--data ", "a=1&b=2 ", '"', "'", "\\", "$(", ")", "`", "${", "}", "$@", "$1",
           "{ ", "; }", "f() ", "function g ", "<<EOF\n", "<<-'E'\n", "EOF\n", "\tE\n", "|", "||", "&&", "&", ";",
           "\n", "\r\n", " ", "#", "$CI_API_V4_URL/runners/1", "/api/v4/projects/$ID/integrations/slack ",
           "API=$U/api/v4 ", '"$API/x" ', "ssh h ", "bash -c ", "docker exec c ", "kubectl exec p -- ",
           "eval ", "case x in ", "a) ", ";;", "esac", "if ", "then ", "fi", "jq .version ", "X=$(", "<<< ",
           "${A:-", "${A%/}", "glab api ", "http PUT ", "wget ", '{"query": "{ runners { id } }"}', "\x00", "é"]
TEXT = st.one_of(st.text(max_size=200), st.lists(st.sampled_from(_PIECES), max_size=50).map("".join))
FUZZ = settings(derandomize=True, deadline=None, max_examples=examples(300),
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _inside(text: str, line: int, column: int) -> bool:
    lines = text.split("\n")
    return 1 <= line <= len(lines) and 1 <= column <= len(lines[line - 1]) + 1


@FUZZ
@given(text=TEXT)
def test_every_word_and_character_is_inside_the_script(text: str) -> None:
    for cmd in read(_script(text)):
        assert isinstance(cmd, Command)
        for w in cmd:
            assert isinstance(w, Token)
            assert _inside(text, w.line, w.column), (w, text)
            value, positions = word_chars(w)
            assert len(value) == len(positions)
            assert all(_inside(text, line, col) for line, col in positions), (w, text)


@FUZZ
@given(text=TEXT)
def test_every_call_the_reader_extracts_is_inside_the_script(text: str) -> None:
    for use in _uses(text):
        if isinstance(use, RestCall):
            spans = [use.span, *(p.span for p in use.params), *(r.span for r in use.reads)]
            assert all(_inside(text, s[0], s[1]) for s in spans), (use, text)
        else:
            assert all(_inside(text, line, col) for line, col in use.positions), (use, text)


@FUZZ
@given(source=st.lists(st.text(alphabet=" -|>'\"abc\\\t#:", max_size=30), min_size=1, max_size=12),
       value=st.text(alphabet=" -'\"abc\\\t#:\n", max_size=80), data=st.data())
def test_a_scalar_is_placed_on_the_lines_of_its_span(source: list[str], value: str, data: st.DataObject) -> None:
    first = data.draw(st.integers(min_value=1, max_value=len(source)))
    last = data.draw(st.integers(min_value=first, max_value=len(source)))
    column = data.draw(st.integers(min_value=1, max_value=len(source[first - 1]) + 1))
    script = map_lines(value, (first, column, last, 1), source)
    for offset in range(len(value) + 1):
        line, col = script.pos_at(offset)
        assert first <= line <= last and col >= 1, (offset, line, col)
    for cmd in read(script):
        for w in cmd:
            assert first <= w.line <= last


@FUZZ
@given(text=TEXT.map(lambda t: t.replace("\r", "")))
def test_a_script_file_with_lone_crs_reads_as_with_lfs(text: str) -> None:
    """A lone CR ends a line (the one line model): the same commands, words and places."""
    def words(script: ScriptText) -> list[list[tuple[str, int, int, int]]]:
        return [[(w.text, w.line, w.column, w.end_column) for w in cmd] for cmd in read(script)]

    assert words(script_file(text.replace("\n", "\r"))) == words(script_file(text))
