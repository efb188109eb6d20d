"""What settings files set in the environment and which commands they run, at exact places."""

from __future__ import annotations

from pathlib import Path

from scanner.core.document import Document
from scanner.readers.settings.dockerfile import parse_dockerfile
from scanner.readers.settings.templated import load_templated_yaml as parse_yaml
from scanner.readers.settings.views import command_lines, env_vars

RUNNER = frozenset({"gitlab-runner"})


def document(kind: str, text: str) -> Document:
    data = parse_dockerfile(text) if kind == "dockerfile" else parse_yaml(text)
    return Document("f", Path("f"), kind, text, data)


def test_compose_environment_in_both_forms_and_a_folded_command() -> None:
    doc = document(
        "compose",
        "services:\n"
        "  register:\n"
        "    image: gitlab/gitlab-runner:v17.11.0\n"
        "    command: >-\n"
        "      register --non-interactive\n"
        '      --registration-token "$TOKEN"\n'
        "    environment:\n"
        '      - "B=2"\n',
    )
    assert [(v.name, v.value, v.span) for v in env_vars(doc)] == [("B", "2", (8, 10, 8, 11))]
    ((words, item),) = command_lines(doc, RUNNER)[(0, "services", "register")]
    assert [(w.text, w.line, w.column) for w in words] == [
        ("gitlab-runner", 3, 12),  # the image runs it: the program is implied
        ("register", 5, 7),
        ("--non-interactive", 5, 16),
        ("--registration-token", 6, 7),
        ("$TOKEN", 6, 28),
    ]
    assert item.route == (0, "services", "register", "command")


def test_kubernetes_containers_env_and_args() -> None:
    doc = document(
        "k8s-manifest",
        "apiVersion: batch/v1\n"
        "kind: Job\n"
        "spec:\n"
        "  template:\n"
        "    spec:\n"
        "      containers:\n"
        "        - name: register\n"
        "          image: registry.example.com/mirror/gitlab-runner:v17.11.0@sha256:abc\n"
        '          args: ["register", "-r", "$(TOKEN)"]\n'
        "          env:\n"
        "            - name: RUNNER_SHELL\n"
        "              value: cmd\n"
        "        - name: shell\n"
        "          image: alpine\n"
        '          command: ["sh", "-c", "gitlab-runner register --shell cmd"]\n',
    )
    assert [(v.name, v.value, v.route) for v in env_vars(doc)] == [
        ("RUNNER_SHELL", "cmd", (0, "spec", "template", "spec", "containers", 0, "env", 0, "name"))
    ]
    jobs = command_lines(doc, RUNNER)
    first = jobs[(0, "spec", "template", "spec", "containers", 0)][0][0]
    assert [(w.text, w.line, w.column) for w in first] == [
        ("gitlab-runner", 8, 18),
        ("register", 9, 19),
        ("-r", 9, 31),
        ("$(TOKEN)", 9, 37),
    ]
    second = jobs[(0, "spec", "template", "spec", "containers", 1)][0][0]
    assert [(w.text, w.column) for w in second] == [
        ("gitlab-runner", 34),
        ("register", 48),
        ("--shell", 57),
        ("cmd", 65),
    ]


def test_dockerfile_exec_form_uses_the_entrypoint_or_the_image() -> None:
    doc = document(
        "dockerfile",
        "FROM gitlab/gitlab-runner:v17.11.0\n"
        'CMD ["register", "--shell", "cmd"]\n'
        "FROM alpine\n"
        'ENTRYPOINT ["/usr/bin/gitlab-runner"]\n'
        'CMD ["register", "-r", "x"]\n',
    )
    commands = [[w.text for w in words] for words, _ in command_lines(doc, RUNNER)[(0,)]]
    assert commands == [
        ["gitlab-runner", "register", "--shell", "cmd"],
        ["/usr/bin/gitlab-runner"],
        ["/usr/bin/gitlab-runner", "register", "-r", "x"],
    ]
