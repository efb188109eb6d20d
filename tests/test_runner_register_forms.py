"""`gitlab-runner register` as scripts write it (scanner.rules.command, scanner.readers.shell): the
pre-10.0 binary name, options of `sudo` clustered, the token in the environment register reads,
flags built in a variable, wrappers and the binary's name in a variable — each at its exact place,
and what is not a deprecated registration left alone."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from scanner.readers.shell import ScriptText, Token, program_index, program_name, read
from scanner.rules.policy import Policy

from conftest import run_scan, where

TOKEN = "runner-registration-token"
SERVER = "runner-register-server-side-arguments"
MACHINE = "runner-docker-machine-executor"


def _found(tmp_path: Path, policies: list[Policy], text: str) -> set[tuple[str, int, int]]:
    path = tmp_path / "enrol.sh"
    path.write_text(text, encoding="utf-8")
    report = run_scan([path], policies)
    assert report.errors == []
    return {(policy, line, column) for policy, _, line, column in where(report)}


def test_the_pre_10_0_binary_under_sudo_with_clustered_options(tmp_path: Path, policies: list[Policy]) -> None:
    text = '''\
#!/bin/bash
sudo -HEu "$RUNNER_USER" gitlab-ci-multi-runner register -n -u "$URL" -r "$TOKEN"
sudo -Hu gitlab-runner /usr/bin/gitlab-ci-multi-runner register -n --tag-list a,b
sudo -ugitlab-runner gitlab-ci-multi-runner register -n --locked
'''
    assert _found(tmp_path, policies, text) == {(TOKEN, 2, 71), (SERVER, 3, 68), (SERVER, 4, 57)}


def test_the_token_and_settings_in_the_environment_register_reads(tmp_path: Path, policies: list[Policy]) -> None:
    text = '''\
#!/bin/sh
REGISTRATION_TOKEN="$T" gitlab-runner register --non-interactive --url "$URL"
docker run --rm -e REGISTRATION_TOKEN -e RUNNER_EXECUTOR gitlab/gitlab-runner:v16.0.0 register -n
docker run --rm -e RUNNER_EXECUTOR=docker+machine gitlab/gitlab-runner register -n --token "$RT"
'''
    assert _found(tmp_path, policies, text) == {(TOKEN, 2, 1), (TOKEN, 3, 20), (MACHINE, 4, 20)}


def test_an_export_counts_next_to_a_register_of_the_same_script(tmp_path: Path, policies: list[Policy]) -> None:
    text = '''\
#!/bin/sh
export REGISTRATION_TOKEN=${TOKEN:-${CI_SERVER_TOKEN:?}}
export REGISTER_LOCKED=false
gitlab-runner register --non-interactive
'''
    assert _found(tmp_path, policies, text) == {(TOKEN, 2, 8), (SERVER, 3, 8)}


def test_flags_built_in_a_variable_are_reported_where_they_are_written(tmp_path: Path,
                                                                        policies: list[Policy]) -> None:
    text = '''\
#!/bin/bash
OPTIONS=""
if [[ "$TAGS" ]]; then
    OPTIONS+=" --tag-list ${TAGS// /,} --run-untagged=false"
fi
EXTRA="--executor docker+machine"
UNUSED="--locked"
gitlab-runner register${OPTIONS:+ $OPTIONS} -n --token "$RT" $EXTRA
'''
    assert _found(tmp_path, policies, text) == {(SERVER, 4, 16), (SERVER, 4, 40), (MACHINE, 6, 8)}


def test_wrappers_and_the_binary_in_a_variable(tmp_path: Path, policies: list[Policy]) -> None:
    text = '''\
#!/bin/bash
app=gitlab-runner
quiet() { "$@" > /dev/null 2>&1; }
quiet $app register --non-interactive --registration-token "$tok"
with_retry gitlab-runner register -n --maximum-timeout 600
with_retry "${app}" register -n --access-level ref_protected
'''
    assert _found(tmp_path, policies, text) == {(TOKEN, 4, 39), (SERVER, 5, 38), (SERVER, 6, 33)}


def test_what_is_not_a_deprecated_registration_stays_clean(tmp_path: Path, policies: list[Policy]) -> None:
    text = '''\
#!/bin/bash
gitlab-runner register --non-interactive --url "$URL" --token glrt-t1_AbCdEfGhIjKlMnOpQrSt --executor docker
gitlab-runner unregister --all-runners
gitlab-runner verify --delete
gitlab-ci-multi-runner unregister --name old
twine register -r testpypi dist/pkg.whl
$TWINE register -r testpypi dist/pkg.whl
bin=gitlab-runner
bin=twine
$bin register -r testpypi dist/pkg.whl
OPTS="--locked"
echo "$OPTS"
gitlab-runner register -n --token "$RT"
gitlab-runner register${OPTS:-default} -n --token "$RT"
docker run -e RUNNER_EXECUTOR gitlab/gitlab-runner register -n --token "$RT"
'''
    assert _found(tmp_path, policies, text) == set()


def _words(line: str) -> list[Token]:
    (cmd,) = read(ScriptText(line, ((1, 1),)))
    return list(cmd)


def test_program_index_skips_the_argument_of_an_option_cluster() -> None:
    assert program_index(_words("sudo -HEu git gitlab-runner register")) == 3
    assert program_index(_words("sudo -ugit gitlab-runner register")) == 2
    assert program_index(_words("sudo -E -H -u git gitlab-runner register")) == 5
    assert program_index(_words("sudo --user=git gitlab-runner register")) == 2
    assert program_name("/opt/bin/gitlab-ci-multi-runner") == "gitlab-runner"


@given(st.lists(st.sampled_from(["sudo", "-HEu", "-u", "-ugit", "--user=git", "-E", "git", "env", "A=1", "-", "--",
                                 "timeout", "5", "gitlab-ci-multi-runner", "register", "$app", "${app}"]),
                min_size=1, max_size=12))
def test_program_index_is_a_word_of_the_command(words: list[str]) -> None:
    tokens = [Token(w, 1, 1, 1 + len(w)) for w in words]
    at = program_index(tokens)
    assert at is None or 0 <= at < len(tokens)


def test_a_command_that_prints_its_arguments_runs_nothing(tmp_path: Path, policies: list[Policy]) -> None:
    text = '''\
#!/bin/sh
echo gitlab-runner register --registration-token x
printf '%s\\n' gitlab-runner register --locked
logger gitlab-runner register --tag-list a
which gitlab-runner register
'''
    assert _found(tmp_path, policies, text) == set()
