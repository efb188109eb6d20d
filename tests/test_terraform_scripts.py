"""Shell scripts written in Terraform files (scanner.readers.api.terraform: `script_strings`, `scripts`),
read as the machine runs them and reported at their exact place in the `.tf` file."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scanner.core.lines import LineIndex, split_lines
from scanner.readers.api.terraform import script_strings
from scanner.rules.policy import Policy

from conftest import run_scan, where

TOKEN = "runner-registration-token"
SERVER = "runner-register-server-side-arguments"
MACHINE = "runner-docker-machine-executor"


def _found(tmp_path: Path, policies: list[Policy], text: str, name: str = "main.tf") -> set[tuple[str, int, int]]:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    report = run_scan([path], policies)
    assert report.errors == []
    return {(policy, line, column) for policy, _, line, column in where(report)}


def test_an_indented_heredoc_is_read_without_its_indentation(tmp_path: Path, policies: list[Policy]) -> None:
    text = '''\
resource "aws_instance" "ci" {
  user_data = <<-EOT
    #!/bin/bash
    set -e
    gitlab-runner register --non-interactive --url "${var.url}" \\
      --registration-token "${var.enrolment_token}" \\
      --executor=docker+machine --locked="${var.locked}"
  EOT
}
'''
    assert _found(tmp_path, policies, text) == {(TOKEN, 6, 7), (MACHINE, 7, 7), (SERVER, 7, 33)}


def test_a_heredoc_of_the_script_inside_the_heredoc(tmp_path: Path, policies: list[Policy]) -> None:
    """The script's own heredocs: fed to a shell (`bash <<'EOF'`, no expansion), written to a script
    (`cat > … <<EOF`), and data; their closing words are indented in the `.tf` file, as `<<-` allows."""
    text = '''\
resource "google_compute_instance" "ci" {
  metadata_startup_script = <<-SCRIPT
    #!/bin/sh
    sudo -i bash <<'EOF'
    gitlab-runner register -n -u https://gitlab.example.com -r "$TOKEN"
    EOF
    cat > /opt/enrol.sh <<EOF
    gitlab-runner register -n --tag-list "${var.tags}"
    EOF
    cat > /etc/motd <<EOF
    gitlab-runner register --registration-token is not run here
    EOF
    echo "$(gitlab-runner register -n --run-untagged --token "${var.auth_token}")"
  SCRIPT
}
'''
    assert _found(tmp_path, policies, text) == {(TOKEN, 5, 61), (SERVER, 8, 31), (SERVER, 13, 39)}


def test_provisioner_commands_and_start_up_script_keys(tmp_path: Path, policies: list[Policy]) -> None:
    text = '''\
resource "null_resource" "enrol" {
  provisioner "remote-exec" {
    inline = [
      "sudo apt-get install -y gitlab-runner",
      "sudo gitlab-runner register -n --name \\"ci ${var.n}\\" --registration-token ${var.t}",
    ]
  }
  provisioner "local-exec" {
    command = <<EOT
ssh admin@${self.private_ip} 'gitlab-runner register -n --maximum-timeout 3600'
EOT
  }
}

resource "google_compute_instance_template" "ci" {
  metadata = {
    "startup-script" = <<EOF
%{ if var.enable }gitlab-runner register -n --access-level=ref_protected%{ endif }
echo $${HOME}
EOF
  }
}
'''
    assert _found(tmp_path, policies, text) == {(TOKEN, 5, 62), (SERVER, 10, 57), (SERVER, 18, 45)}


def test_a_heredoc_with_a_shebang_is_a_script_whatever_holds_it(tmp_path: Path, policies: list[Policy]) -> None:
    text = '''\
resource "local_file" "enrol" {
  filename = "enrol.sh"
  content  = <<EOF
#!/usr/bin/env bash
gitlab-runner register -n --registration-token "${var.t}"
EOF
}
resource "local_file" "readme" {
  filename = "README"
  content  = <<EOF
Run gitlab-runner register --registration-token TOKEN by hand.
EOF
}
'''
    assert _found(tmp_path, policies, text) == {(TOKEN, 5, 27)}


def test_what_is_not_a_script_or_not_a_deprecated_register_stays_clean(tmp_path: Path,
                                                                       policies: list[Policy]) -> None:
    text = '''\
# user_data = "gitlab-runner register --registration-token x"
resource "aws_instance" "ci" {
  description = "gitlab-runner register --registration-token x"
  tags        = { Name = "gitlab-runner register --locked" }
  user_data   = <<-EOT
    #!/bin/bash
    gitlab-runner register --non-interactive --url "${var.url}" --token glrt-t1_AbCdEfGhIjKlMnOpQrSt \\
      --executor docker-autoscaler
    gitlab-runner unregister --all-runners
    gitlab-runner verify --delete
    # gitlab-runner register --registration-token "${var.old}"
    echo gitlab-runner register --locked
  EOT
}
'''
    assert _found(tmp_path, policies, text) == set()


def test_windows_line_ends(tmp_path: Path, policies: list[Policy]) -> None:
    text = ('resource "aws_instance" "ci" {\r\n  user_data = <<EOF\r\n#!/bin/bash\r\n'
            'gitlab-runner register -n \\\r\n  --registration-token x\r\nEOF\r\n}\r\n')
    assert _found(tmp_path, policies, text) == {(TOKEN, 5, 3)}


def test_values_are_what_the_machine_runs_and_each_character_keeps_its_place() -> None:
    text = ('resource "x" "y" {\n  inline = ["a \\"b\\" \\u00e9 ${var.x} $${HOME}"]\n'
            '  command = <<-EOT\n    if x; then\n      y %{ if z }w%{ endif }\n    fi\n  EOT\n}\n')
    first, second = script_strings(text)
    assert (first.attribute, first.value) == ("inline", 'a "b" é ${var_x} ${HOME}')
    assert (second.attribute, second.value) == ("command", "if x; then\n  y " + " " * 9 + "w" + " " * 10 + "\nfi\n")
    lines = LineIndex(text)
    assert [lines.position(o) for o in first.offsets[:3]] == [(2, 14), (2, 15), (2, 16)]  # `a`, ` `, `\"`
    assert lines.position(second.offsets[second.value.index("y")]) == (5, 7)


def test_an_unclosed_heredoc_or_string_holds_no_script() -> None:
    assert script_strings('user_data = <<EOF\n#!/bin/sh\ngitlab-runner register\n') == []
    assert script_strings('command = "gitlab-runner register\n') == []


_PIECES = st.sampled_from(['user_data = ', 'inline = [', 'command = ', '<<EOF\n', '<<-EOT\n', 'EOF\n', '  EOT\n',
                           '"', '\\"', '\\u00e9', '${', '}', '%{', '$${', '{', '#!/bin/sh\n', '#', '//', '/*', '*/',
                           '\n', '\r\n', '\r', ' ', 'gitlab-runner register -r x', 'a = "b"\n', 'x {\n'])


@given(st.one_of(st.lists(_PIECES, max_size=40).map("".join), st.text(max_size=200)))
def test_any_text_is_read_without_failing_and_every_place_is_in_the_file(text: str) -> None:
    lines = split_lines(text)
    index = LineIndex(text)
    for found in script_strings(text):
        assert len(found.offsets) == len(found.value)
        assert list(found.offsets) == sorted(found.offsets) and len(set(found.offsets)) == len(found.offsets)
        for offset in found.offsets:
            line, column = index.position(offset)
            assert 1 <= line <= len(lines) and 1 <= column <= len(lines[line - 1]) + 1


@pytest.mark.parametrize("attribute", ["user_data", "metadata_startup_script", "startup_script", "custom_data",
                                       "command", "script"])
def test_each_script_attribute_is_read(attribute: str) -> None:
    (found,) = script_strings(f'{attribute} = <<EOF\ngitlab-runner register\nEOF\n')
    assert (found.attribute, found.value) == (attribute, "gitlab-runner register\n")


def test_a_placeholder_that_makes_continued_lines_continues_the_command(tmp_path: Path,
                                                                        policies: list[Policy]) -> None:
    """`${join("\\n", formatlist("--volume %s \\\\", …))}` renders lines that each end with a backslash."""
    text = '''\
resource "aws_instance" "ci" {
  user_data = <<EOF
#!/bin/bash
gitlab-runner register -n \\
    ${join("\\n", formatlist("--docker-volumes \\"%s\\" \\\\", var.volumes))}
    --tag-list "${var.tags}" \\
    ${var.extra}
    --locked
EOF
}
'''
    assert _found(tmp_path, policies, text) == {(SERVER, 6, 5)}
