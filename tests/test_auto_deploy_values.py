"""`.gitlab/auto-deploy-values.yaml` is a file kind of its own (docs/settings.md): the policies that
name it read it, the policies of Helm values read it too, and a values file of another chart is not it."""

from __future__ import annotations

from pathlib import Path

from scanner.rules.catalog import load_policies
from scanner.rules.policy import Policy

from conftest import run_scan, where

HELM_ONLY = """title: Helm values key used by an organisation
summary: s
message: "`{match}` is ours"
rationale: r
remediation: r
breaking: false
origin: acme
references: [{title: t, url: "https://example.com"}]
applies_to: [helm-values]
match: {kind: jsonpath, path: "$.replicaCount", value: {equals: 2}}
example: {before: "replicaCount: 2", after: "replicaCount: 3"}
"""
VALUES = "replicaCount: 2\nciliumNetworkPolicy:\n  enabled: true\n"


def test_helm_values_policies_read_auto_deploy_values(tmp_path: Path, policies: list[Policy]) -> None:
    custom = tmp_path / "policies"
    custom.mkdir()
    (custom / "acme-replicas.yaml").write_text(HELM_ONLY)
    checkout = tmp_path / "app"
    for path in (".gitlab/auto-deploy-values.yaml", "chart/values.yaml"):
        (checkout / path).parent.mkdir(parents=True, exist_ok=True)
        (checkout / path).write_text(VALUES)
    report = run_scan([checkout], [*policies, *load_policies([custom])])
    assert report.errors == []
    assert where(report) == {
        ("acme-replicas", ".gitlab/auto-deploy-values.yaml", 1, 1),
        ("auto-deploy-cilium-network-policy", ".gitlab/auto-deploy-values.yaml", 2, 1),
        ("acme-replicas", "chart/values.yaml", 1, 1),  # another chart: Helm values, not the Auto Deploy chart's
    }
