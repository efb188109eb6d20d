"""Terraform `helm_release` values of GitLab's charts, read as Helm values (scanner.readers.settings.helmrelease,
scanner.readers.settings.hcl): what the provider would send, where it is written."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scanner.readers.settings.helmrelease import releases
from scanner.readers.settings.parsers import parse_terraform

from conftest import assert_positions_inside

TF = '''\
resource "helm_release" "runner" {
  chart  = "gitlab-runner"
  values = [
    yamlencode({ runners = { privileged = false, tags = "a,b" }, "rbac" = { create = true } }),
    <<-EOT
    runners:
      privileged: true   # wins over the first document
    EOT
  ]
  set {
    name  = "podAnnotations.prometheus\\\\.io/scrape"
    value = "true"
  }
  set {
    name  = "concurrent"
    value = 10 * var.scale
  }
  lifecycle { ignore_changes = [values] }
}
'''


def test_values_merge_as_the_provider_sends_them() -> None:
    (tree,), problems = releases(TF)
    assert problems == []
    root = tree.roots[0]
    assert root == {"runners": {"privileged": True, "tags": "a,b"}, "rbac": {"create": True},
                    "podAnnotations": {"prometheus.io/scrape": "true"}, "concurrent": "10 * var.scale"}
    runners = root["runners"]
    assert tree.table[id(runners)]["privileged"] == ((7, 7, 7, 17), (7, 19, 7, 23))  # the heredoc's line
    assert tree.table[id(runners)]["tags"][1] == (4, 57, 4, 62)
    assert tree.table[id(root)]["concurrent"] == ((15, 13, 15, 25), (16, 13, 16, 27))


def test_a_release_that_cannot_be_read_is_one_problem_and_the_next_is_read() -> None:
    text = ('resource "helm_release" "a" {\n  chart = "gitlab-runner"\n  values = [<<EOT\nx: 1\n'
            'resource "helm_release" "b" {\n  chart = "gitlab"\n  set {\n    name = "x"\n    value = 1\n  }\n}\n')
    found, problems = releases(text)
    assert problems == [(3, "helm_release not read: heredoc `EOT` is never closed")]
    assert [t.roots for t in found] == [[{"x": 1}]]


def test_only_gitlab_charts_are_read() -> None:
    text = ('resource "helm_release" "pg" {\n  chart = "postgresql"\n'
            '  set {\n    name = "image"\n    value = "x"\n  }\n}\n')
    assert releases(text) == ([], [])
    assert parse_terraform(text).embedded == []


_PIECES = ['resource "helm_release" "r" {', "}", "{", "chart = \"gitlab-runner\"", "values = [", "]", "<<-EOT\n",
           "EOT", "set {", 'name = "a.b"', "value = ", '"${var.x}"', "${", '"', "\\", "#", "//", "/*", "*/",
           "yamlencode(", ")", "=", ",", "\n", " ", "x: 1", "var.y", "[", "1e3", "true"]


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(text=st.one_of(st.text(max_size=200), st.lists(st.sampled_from(_PIECES), max_size=80).map("".join)))
def test_any_text_gives_values_or_problems_with_positions_inside(text: str) -> None:
    lines = text.count("\n") + 1
    found, problems = releases(text)
    for line, _ in problems:
        assert line is None or 1 <= line <= lines
    for tree in found:
        assert_positions_inside(tree, lines)


def test_a_chart_named_by_a_local_value_of_the_file() -> None:
    text = '''\
locals {
  chart_name = "gitlab-runner"
  other      = "postgresql"
  oci        = "oci://registry.example.com/charts/gitlab"
}
resource "helm_release" "a" {
  chart = local.chart_name
  set {
    name  = "runnerRegistrationToken"
    value = var.token
  }
}
resource "helm_release" "b" {
  chart = local.other
  set {
    name  = "image"
    value = "x"
  }
}
resource "helm_release" "c" {
  chart = local.unknown
  set {
    name  = "image"
    value = "y"
  }
}
resource "helm_release" "d" {
  chart = local.oci
  set {
    name  = "certmanager.install"
    value = false
  }
}
'''
    found, problems = releases(text)
    assert problems == []
    assert [t.roots for t in found] == [[{"runnerRegistrationToken": "var.token"}],
                                        [{"certmanager": {"install": False}}]]
    assert found[0].table[id(found[0].roots[0])]["runnerRegistrationToken"] == ((9, 13, 9, 38), (10, 13, 10, 22))


def test_a_locals_block_that_cannot_be_read_is_one_problem() -> None:
    text = ('locals {\n  chart_name = "gitlab-runner"\n  broken = [\n}\n'
            'resource "helm_release" "a" {\n  chart = local.chart_name\n}\n')
    found, problems = releases(text)
    assert found == []
    assert problems == [(4, "locals not read: expected a value")]
