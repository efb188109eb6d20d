"""Kubernetes manifests that hold others in a list — a `kind: List`'s `items` (what `kubectl get -o
yaml` writes), an OpenShift `Template`'s `objects` — are read through: a runner registered with a
registration token in a container of one of them is found where it is written, as in a Deployment
of its own; a look-alike (the new runner token, an `items` list of a volume) is not."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from test_shell_flow import _scan as _scan_files

from scanner.rules.policy import Policy

TOKEN = "runner-registration-token"
ARGS = "runner-register-server-side-arguments"

DEPLOYMENT = """\
- kind: Deployment
  apiVersion: apps/v1
  metadata:
    name: runner
  spec:
    template:
      spec:
        initContainers:
          - name: register
            image: gitlab/gitlab-runner:v16.11.0
            env:
              - name: REGISTER_LOCKED
                value: "false"
              - name: REGISTRATION_TOKEN
                valueFrom:
                  secretKeyRef: {key: token, name: runner}
            command: [gitlab-runner, register]
            args: ["--non-interactive", "--url", "https://gitlab.example.com"]
"""

FILLER = """\
- kind: ConfigMap
  apiVersion: v1
  metadata:
    name: c{n}
  data:
    config.toml: |
      concurrent = 2
"""


def _scan(files: dict[str, str], policies: list[Policy], root: Path) -> set[tuple[str, str, int, int]]:
    return _scan_files(root, policies, files)


def _indent(text: str) -> str:
    return "".join("  " + line if line.strip() else line for line in text.splitlines(keepends=True))


def test_list_and_template_are_read_through(tmp_path: Path, policies: list[Policy]) -> None:
    as_list = "apiVersion: v1\nkind: List\nitems:\n" + DEPLOYMENT
    template = (
        "kind: Template\napiVersion: template.openshift.io/v1\nparameters:\n- name: TOKEN\nobjects:\n"
        + FILLER.format(n=1)
        + DEPLOYMENT
    )
    assert _scan({"list.yaml": as_list, "template.yaml": template}, policies, tmp_path) == {
        (ARGS, "list.yaml", 15, 23),
        (TOKEN, "list.yaml", 17, 23),
        (ARGS, "template.yaml", 24, 23),
        (TOKEN, "template.yaml", 26, 23),
    }


def test_look_alikes_in_lists(tmp_path: Path, policies: list[Policy]) -> None:
    new_token = DEPLOYMENT.replace("REGISTER_LOCKED", "RUNNER_NAME").replace("REGISTRATION_TOKEN", "CI_SERVER_TOKEN")
    volume_items = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
        "    - name: app\n      image: alpine:3.20\n      command: [sh, -c, echo]\n"
        "  volumes:\n    - name: v\n      configMap:\n        name: c\n        items:\n"
        "          - key: REGISTRATION_TOKEN\n            path: token\n"
    )
    files = {"list.yaml": "apiVersion: v1\nkind: List\nitems:\n" + new_token, "pod.yaml": volume_items}
    assert _scan(files, policies, tmp_path) == set()


@settings(max_examples=20, deadline=None)
@given(before=st.integers(min_value=0, max_value=4), key=st.sampled_from(["items", "objects"]),
       nested=st.booleans())
def test_a_container_in_a_list_is_found_where_it_is(
    policies: list[Policy], before: int, key: str, nested: bool
) -> None:
    """Property: whatever objects come before it, and whether the list is written at the top or
    indented under its key, the Deployment's two findings are on its own lines."""
    kind = "List" if key == "items" else "Template"
    body = "".join(FILLER.format(n=i) for i in range(before)) + DEPLOYMENT
    if nested:
        body = _indent(body)
    head = f"apiVersion: v1\nkind: {kind}\n{key}:\n"
    offset = head.count("\n") + 7 * before
    with tempfile.TemporaryDirectory() as d:
        found = _scan({"m.yaml": head + body}, policies, Path(d))
    col = 25 if nested else 23
    assert found == {(ARGS, "m.yaml", offset + 12, col), (TOKEN, "m.yaml", offset + 14, col)}
