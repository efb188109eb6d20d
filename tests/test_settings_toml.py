"""Runner `config.toml`: the same values as `tomllib`, exact positions, and bad lines reported
as warnings while the rest of the file is read."""

from __future__ import annotations

import tomllib

from scanner.readers.settings.toml import load_toml

CONFIG = """\
concurrent = 4
check_interval = 0

[session_server]
  session_timeout = 1_800

[[runners]]
  name = "windows"
  url = "https://gitlab.example.com/"
  token = "glrt-abc"
  executor = "shell"
  shell = "cmd"
  environment = ["A=1",
    "B=2"] # two lines
  [runners.cache]
    [runners.cache.s3]
      ServerAddress = 's3.example.com'
      "Bucket.Name" = 'literal\\path'

[[runners]]
  name = "k8s"
  executor = "kubernetes"
  [runners.kubernetes]
    terminationGracePeriodSeconds = 30
    node_selector = { "kubernetes.io/os" = "linux", arch = "amd64" }
    pod.labels.team = "ci"
    note = \"\"\"
first \\
  second\"\"\"
    ratio = -1.5e3
    mask = 0o755
"""


def test_values_match_tomllib() -> None:
    tree = load_toml(CONFIG)
    assert tree.warnings == []
    assert tree.roots[0] == tomllib.loads(CONFIG)


def test_positions_of_keys_values_and_tables() -> None:
    tree = load_toml(CONFIG)
    root = tree.roots[0]
    runners = root["runners"]
    assert tree.table[id(root)]["runners"] == ((7, 3, 7, 10), (7, 1, 7, 12))
    assert tree.table[id(runners)] == [(7, 1, 7, 12), (20, 1, 20, 12)]  # each [[runners]] header
    assert tree.table[id(runners[0])]["shell"] == ((12, 3, 12, 8), (12, 11, 12, 16))
    assert tree.table[id(runners[0])]["environment"] == ((13, 3, 13, 14), (13, 17, 14, 11))  # over two lines
    s3 = runners[0]["cache"]["s3"]
    assert tree.table[id(s3)]["Bucket.Name"] == ((18, 7, 18, 20), (18, 23, 18, 37))
    kubernetes = runners[1]["kubernetes"]
    assert tree.table[id(runners[1])]["kubernetes"] == ((23, 12, 23, 22), (23, 3, 23, 23))
    assert tree.table[id(kubernetes)]["terminationGracePeriodSeconds"] == ((24, 5, 24, 34), (24, 37, 24, 39))
    selector = kubernetes["node_selector"]
    assert tree.table[id(selector)]["arch"] == ((25, 53, 25, 57), (25, 60, 25, 67))
    assert tree.table[id(kubernetes["pod"]["labels"])]["team"] == ((26, 16, 26, 20), (26, 23, 26, 27))
    assert tree.table[id(kubernetes)]["note"][1] == (27, 12, 29, 12)
    assert {"terminationGracePeriodSeconds", "shell", "runners", "Bucket.Name"} <= tree.keys


def test_a_bad_line_is_a_warning_and_reading_goes_on() -> None:
    text = (
        "[[runners]]\n"
        '  name = "first"\n'
        "  limit = = 3\n"
        '  shell = "cmd"\n'
        '  title = "unterminated\n'
        "[runners.kubernetes]\n"
        "  terminationGracePeriodSeconds = 30\n"
    )
    tree = load_toml(text)
    assert tree.warnings == [(3, "TOML not read: expected a value"), (5, "TOML not read: unterminated string")]
    assert tree.roots[0] == {
        "runners": [{"name": "first", "shell": "cmd", "kubernetes": {"terminationGracePeriodSeconds": 30}}]
    }
