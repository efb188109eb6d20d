"""A templated value that decides a finding (`enabled: {{INCOMING_EMAIL_ENABLED}}`) gives a warning
that says "if …", never silence and never an error the file alone cannot prove (issue 12)."""

from __future__ import annotations

from pathlib import Path

from scanner.core.versions import Version
from scanner.rules.policy import Policy

from conftest import run_scan

TEMPLATE = Path(__file__).parent / "policies" / "mail-sidekiq-delivery-method" / "fail" / "docker-gitlab"


def test_templated_enabled_is_a_conditional_warning(policies: list[Policy]) -> None:
    for target in ("17.0", "19.0", "20.0"):
        report = run_scan([TEMPLATE], policies, target)
        found = [(f.rule_id, f.location.line, f.location.column, f.severity, f.message) for f in report.findings]
        assert len(found) == 1, found
        rule_id, line, column, severity, message = found[0]
        assert (rule_id, line, column, severity) == ("mail-sidekiq-delivery-method", 8, 3, "warning")
        assert message.startswith(
            "If `enabled` ({{INCOMING_EMAIL_ENABLED}}) is true: mail delivery method `sidekiq` is deprecated "
            "(`delivery_method` not set, so `sidekiq`); use `webhook`."
        ), message


def test_literal_enabled_keeps_the_policys_severity_without_a_condition(policies: list[Policy], tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.mkdir()
    (config / "gitlab.yml").write_text(
        "production: &base\n  incoming_email:\n    enabled: true\n    address: x@example.com\n", encoding="utf-8"
    )
    report = run_scan([tmp_path], policies, "19.0")
    [policy] = [p for p in policies if p.id == "mail-sidekiq-delivery-method"]
    assert [(f.rule_id, f.location.line, f.severity) for f in report.findings] == [
        ("mail-sidekiq-delivery-method", 2, policy.severity_at(Version(19, 0)))
    ]
    assert not report.findings[0].message.startswith("If ")
