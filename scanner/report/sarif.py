"""SARIF 2.1.0: one run, a rule per policy, a result per finding, input errors as notifications.

Checked against the OASIS schema (`tests/data/schemas/sarif-schema-2.1.0.json`) in the tests.
Mapping choices:

* `rules` describes every policy reported (as the SARIF consumers in GitLab and GitHub expect:
  a rule per `ruleId` used), built from the policy data; a finding whose policy was not passed
  in still gets a rule, built from the finding.
* Columns are 1-based Unicode code points and the end column is exclusive — SARIF's convention
  and ours, so they copy across (`columnKind: unicodeCodePoints`).
* `region.snippet` is the matched part of the (already redacted) source line; `contextRegion`
  carries the whole line when it is more than the region (SARIF wants a proper superset).
  `logicalLocations` holds the symbolic path inside the document.
* Paths are relative to `%SRCROOT%`, the directory sunset scanned.
* With `--diff-base`, every result has a `baselineState` (SARIF 2.1.0, 3.27.24: present on one result,
  present on all): `new` or `unchanged` by fingerprint, and the findings of the base that are gone are
  results too, `absent`, at their place in the base. `properties.baseline` names the base.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from scanner import __version__
from scanner.core.results import GITLAB_ORIGINS, Finding, InputError, Report
from scanner.core.versions import Version
from scanner.report.policydocs import policy_markdown
from scanner.rules.policy import Policy

if TYPE_CHECKING:
    from scanner.report.options import RenderOptions

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
# sunset has no public home yet; until it does, point at the catalogue its policies follow.
INFORMATION_URI = "https://docs.gitlab.com/update/deprecations/"
SRCROOT = "%SRCROOT%"
FINGERPRINT_KEY = "sunset/v1"
LEVEL: dict[str, str] = {"error": "error", "warning": "warning", "info": "note"}


def _pascal(rule_id: str) -> str:
    return "".join(part.capitalize() for part in rule_id.split("-"))


def _policy_rule(p: Policy, target: Version) -> dict[str, Any]:
    d = p.data
    help_text = d.remediation.strip() + (f"\n\nReplacement: {d.replacement}" if d.replacement else "")
    source = "gitlab" if d.origin in GITLAB_ORIGINS else "local"
    tags = [source, "deprecation", *(["breaking"] if d.breaking else []), *p.applies_to]
    return {
        "id": p.id,
        "name": _pascal(p.id),
        "shortDescription": {"text": d.title},
        "fullDescription": {"text": " ".join(d.summary.split())},
        "help": {"text": help_text, "markdown": policy_markdown(p)},
        "helpUri": p.docs_url,
        "defaultConfiguration": {"level": LEVEL[p.severity_at(target)]},
        "properties": {
            "deprecated_in": d.deprecated_in,
            "removed_in": p.removal.release,
            "removal": p.removal.status,
            "first_announced": p.removal.announced,
            "breaking": d.breaking,
            "origin": d.origin,
            "tags": tags,
        },
    }


def _finding_rule(f: Finding) -> dict[str, Any]:
    """A rule for a finding whose policy the caller did not pass: what the finding itself knows."""
    return {
        "id": f.rule_id,
        "name": _pascal(f.rule_id),
        "shortDescription": {"text": f.title},
        "helpUri": f.docs_url,
        "defaultConfiguration": {"level": LEVEL[f.severity]},
        "properties": {"deprecated_in": f.deprecated_in, "removed_in": f.removed_in, "tags": ["gitlab", "deprecation"]},
    }


def _artifact(path: str) -> dict[str, Any]:
    return {"uri": quote(path, safe="/"), "uriBaseId": SRCROOT}


def _region(f: Finding) -> dict[str, Any]:
    loc = f.location
    region: dict[str, Any] = {
        "startLine": loc.line,
        "startColumn": loc.column,
        "endLine": loc.end_line,
        "endColumn": loc.end_column,
    }
    start, end = loc.snippet_span()
    part = loc.snippet[start - 1 : end - 1] if end is not None else ""
    if part:
        region["snippet"] = {"text": part}
    return region


def _result(f: Finding, index: int, state: str | None = None) -> dict[str, Any]:
    loc = f.location
    region = _region(f)
    physical: dict[str, Any] = {"artifactLocation": _artifact(loc.path), "region": region}
    if loc.snippet and region.get("snippet") != {"text": loc.snippet}:
        physical["contextRegion"] = {"startLine": loc.line, "snippet": {"text": loc.snippet}}
    return {
        "ruleId": f.rule_id,
        "ruleIndex": index,
        "level": LEVEL[f.severity],
        "message": {"text": f.message},
        "locations": [
            {
                "physicalLocation": physical,
                "logicalLocations": [{"fullyQualifiedName": loc.symbolic}],
            }
        ],
        "partialFingerprints": {FINGERPRINT_KEY: f.fingerprint},
    } | ({"baselineState": state} if state else {})


def _notification(e: InputError) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": _artifact(e.path)}
    if e.line:
        physical["region"] = {"startLine": e.line}
    return {
        "level": "error",
        "message": {"text": e.message},
        "locations": [{"physicalLocation": physical}],
        "descriptor": {"id": "input-error"},
    }


def _rules(findings: Sequence[Finding], target: Version, policies: Sequence[Policy]) -> list[dict[str, Any]]:
    reported = {f.rule_id for f in findings}
    rules = {p.id: _policy_rule(p, target) for p in policies if p.id in reported}
    for f in findings:
        rules.setdefault(f.rule_id, _finding_rule(f))
    return [rules[k] for k in sorted(rules)]


def _results(report: Report, index: dict[str, int]) -> list[dict[str, Any]]:
    d = report.diff
    if d is None:
        return [_result(f, index[f.rule_id]) for f in report.findings]
    return [_result(f, index[f.rule_id], "new" if d.is_new(f) else "unchanged") for f in report.findings] + [
        _result(f, index[f.rule_id], "absent") for f in d.fixed]


def sarif_dict(report: Report, policies: Sequence[Policy]) -> dict[str, Any]:
    fixed = report.diff.fixed if report.diff else ()
    rules = _rules([*report.findings, *fixed], Version.parse(report.target), policies)
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    run: dict[str, Any] = {
        "tool": {
            "driver": {"name": "sunset", "version": __version__, "informationUri": INFORMATION_URI, "rules": rules}
        },
        "originalUriBaseIds": {SRCROOT: {"description": {"text": "The directory sunset scanned."}}},
        "invocations": [
            {
                "executionSuccessful": True,
                "toolExecutionNotifications": [_notification(e) for e in report.errors],
            }
        ],
        "columnKind": "unicodeCodePoints",
        "results": _results(report, index),
        "properties": {"target": report.target, "suppressed": report.suppressed, "baselined": report.baselined},
    }
    if report.diff is not None:
        d = report.diff
        run["properties"]["baseline"] = {"base": d.base, "commit": d.commit, "note": d.note}
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def render(report: Report, options: RenderOptions) -> str:
    return json.dumps(sarif_dict(report, options.policies), indent=2, ensure_ascii=False) + "\n"
