"""Ansible task files and playbooks: which files are Ansible, and the commands their tasks run, read as
shell at their exact place — `command:`/`shell:` in each form, a container's `command:`, a command built
by `set_fact`, the role's variables. Arbitrary input never raises and never costs another file."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scanner.cli import main
from scanner.core.document import Document
from scanner.core.tree import ParseError
from scanner.engine.recognise import Recognition
from scanner.readers.ansible import ansible_scripts, parse_ansible

TOKEN = "runner-registration-token"
SERVER = "runner-register-server-side-arguments"

RECOGNISED = [
    ("roles/r/tasks/main.yml", "- name: x\n  command: gitlab-runner list\n", "ansible"),
    ("roles/r/handlers/main.yaml", "---\n- name: restart\n  ansible.builtin.shell: gitlab-runner restart\n",
     "ansible"),
    ("site.yml", "- hosts: runners\n  tasks:\n    - command: gitlab-runner verify\n", "ansible"),
    ("roles/r/tasks/docker.yml", "- community.docker.docker_container:\n    image: x\n    command: y\n", "ansible"),
    ("roles/r/defaults/main.yml", "runner_binary: gitlab-runner\n", None),  # variables, no task
    ("roles/r/tasks/files.yml", "- name: x\n  copy:\n    src: a\n    dest: b\n", None),  # runs nothing
    ("notes/list.yml", "- command: not a play\n", None),  # neither in a role nor a playbook
    ("roles/r/tasks/ci.yml", "build:\n  script: [make]\n", "gitlab-ci"),  # a mapping: not Ansible
]


@pytest.mark.parametrize(("rel", "text", "kind"), RECOGNISED, ids=[r for r, _, _ in RECOGNISED])
def test_recognition(tmp_path: Path, rel: str, text: str, kind: str | None) -> None:
    path = tmp_path / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    found = Recognition().walked(path, rel)
    assert (found.name if found is not None else None) == kind


def _scan(files: dict[str, str], tmp_path: Path) -> tuple[set[tuple[str, str, int, int]], dict[str, object]]:
    repo = tmp_path / "repo"
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text, encoding="utf-8")
    (repo / ".git").mkdir(exist_ok=True)
    out = tmp_path / "report.json"
    assert main(["scan", str(repo), "--format", "json", "--output", str(out), "--exit-zero", "--quiet"]) == 0
    report: dict[str, object] = json.loads(out.read_text(encoding="utf-8"))
    found = {(f["rule_id"], f["path"], f["line"], f["column"]) for f in report["findings"]}  # type: ignore[attr-defined]
    return found, report


TASKS = """\
---
- name: free form
  command: gitlab-runner register --registration-token {{ token }}
- name: cmd
  ansible.builtin.command:
    cmd: gitlab-runner register --tag-list {{ tags | join(',') }}
- name: argv
  ansible.builtin.command:
    argv:
      - gitlab-runner
      - register
      - --registration-token
      - "{{ token }}"
- name: args
  command:
  args:
    cmd: gitlab-runner register --locked
- name: shell lines
  shell: |
    gitlab-runner list
    echo --registration-token
- block:
    - name: in a block
      ansible.legacy.shell: >-
        gitlab-runner register
        --run-untagged
- name: unknown program
  command: "{{ some_binary }} register --registration-token x"
- name: another image
  docker_container:
    image: nginx:1
    command: register --registration-token x
- name: runner image, command as a list
  community.docker.docker_container:
    image: gitlab/gitlab-runner:v16.0.0
    command: ["register", "--registration-token", "x"]
"""


def test_every_command_form_at_its_place(tmp_path: Path) -> None:
    found, report = _scan({"roles/runner/tasks/main.yml": TASKS}, tmp_path)
    path = "roles/runner/tasks/main.yml"
    assert found == {
        (TOKEN, path, 3, 35),
        (SERVER, path, 6, 33),
        (TOKEN, path, 12, 9),
        (SERVER, path, 17, 33),
        (SERVER, path, 26, 9),
        (TOKEN, path, 36, 28),
    }
    assert report["errors"] == []


def test_set_fact_and_role_variables(tmp_path: Path) -> None:
    """A command built by `set_fact` is read where it is written; the binary's name comes from the
    role's `vars/main.yml` (over `defaults/main.yml`), through another variable."""
    files = {
        "roles/runner/defaults/main.yml": "runner_bin: not-the-runner\n",
        "roles/runner/vars/main.yml": "runner_package: gitlab-runner\nrunner_bin: '{{ runner_package }}'\n",
        "roles/runner/tasks/main.yml": (
            "- set_fact:\n"
            "    register_cmd: >-\n"
            "      {{ runner_bin }} register\n"
            "      {% if locked %}\n"
            "      --locked\n"
            "      {% endif %}\n"
            "- name: register\n"
            "  command: >\n"
            "    {{ register_cmd }}\n"
            "    --registration-token '{{ token }}'\n"
        ),
    }
    found, _ = _scan(files, tmp_path)
    assert found == {(SERVER, "roles/runner/tasks/main.yml", 5, 7), (TOKEN, "roles/runner/tasks/main.yml", 10, 5)}


def test_placeholder_values_equal_nothing(tmp_path: Path) -> None:
    """A flag whose value is a template expression is reported; a value test never matches the placeholder."""
    files = {"roles/r/tasks/main.yml": "- command: gitlab-runner register --executor {{ executor }}\n"}
    found, _ = _scan(files, tmp_path)
    assert found == set()


def test_folded_continuations(tmp_path: Path) -> None:
    """`command: >` with a backslash ending each line (the folding joins them): every flag is read."""
    text = "- command: >\n    gitlab-runner register \\\n    --name x \\\n    --registration-token y\n"
    found, _ = _scan({"roles/r/tasks/main.yml": text}, tmp_path)
    assert found == {(TOKEN, "roles/r/tasks/main.yml", 4, 5)}


def test_a_broken_task_file_costs_nothing_else(tmp_path: Path) -> None:
    files = {
        "roles/r/tasks/main.yml": "- command: gitlab-runner register --registration-token x\n  shell: [\n",
        "scripts/register.sh": "gitlab-runner register --registration-token x\n",
    }
    found, report = _scan(files, tmp_path)
    assert (TOKEN, "scripts/register.sh", 1, 24) in found
    assert [e["path"] for e in report["errors"]] == ["roles/r/tasks/main.yml"]  # type: ignore[attr-defined]


_WORDS = st.sampled_from(["command", "shell", "set_fact", "docker_container", "argv", "cmd", "args", "image",
                          "block", "tasks", "gitlab-runner", "register", "--registration-token", "{{ x }}",
                          "{% if a %}", "x", "- ", ": ", "\n", "  ", ">", "|", "'", '"', "\\", "{{", "}}"])


@settings(suppress_health_check=list(HealthCheck), deadline=None, max_examples=150)
@given(text=st.lists(_WORDS, max_size=40).map("".join) | st.text(max_size=200))
def test_any_text_reads_or_is_a_parse_error(text: str) -> None:
    try:
        tree = parse_ansible(text)
    except ParseError:
        return
    doc = Document("roles/r/tasks/main.yml", Path("/nonexistent/roles/r/tasks/main.yml"), "ansible", text, tree)
    for item, script in ansible_scripts(doc, re.compile("gitlab-runner|register|x")):
        assert item.text == script.text
        for offset in range(len(script.text)):
            line, column = script.pos_at(offset)
            assert line >= 1 and column >= 1


@settings(suppress_health_check=list(HealthCheck), deadline=None, max_examples=40)
@given(data=st.binary(max_size=300))
def test_any_bytes_never_lose_other_files(tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    tmp_path = tmp_path_factory.mktemp("ansible")
    repo = tmp_path / "repo"
    (repo / "roles" / "r" / "tasks").mkdir(parents=True)
    (repo / "roles" / "r" / "tasks" / "main.yml").write_bytes(b"- command: gitlab-runner x\n" + data)
    (repo / "register.sh").write_text("gitlab-runner register --registration-token x\n", encoding="utf-8")
    (repo / ".git").mkdir()
    out = tmp_path / "report.json"
    assert main(["scan", str(repo), "--format", "json", "--output", str(out), "--exit-zero", "--quiet"]) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    assert (TOKEN, "register.sh", 1, 24) in {(f["rule_id"], f["path"], f["line"], f["column"])
                                              for f in report["findings"]}
    assert all("internal error" not in e["message"] for e in report["errors"])
