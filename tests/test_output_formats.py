"""SARIF, GitLab Code Quality and the merge-request Markdown: schema, structure, identity, exact text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from scanner.core.results import Report
from scanner.report import codequality, markdown, sarif
from scanner.report.jsonfmt import report_dict
from scanner.report.options import RenderOptions
from scanner.rules.policy import Policy

from conftest import ROOT, run_scan

# OASIS's SARIF 2.1.0 schema (docs.oasis-open.org/sarif/sarif/v2.1.0), kept with the tests so a
# clone checks its SARIF against the standard with nothing beside it.
SARIF_SCHEMA = ROOT / "tests" / "data" / "schemas" / "sarif-schema-2.1.0.json"


@pytest.fixture(scope="module")
def samples_report(policies: list[Policy]) -> Report:
    return run_scan([ROOT / "samples"], policies)


@pytest.fixture(scope="module")
def sarif_validator() -> Any:
    assert SARIF_SCHEMA.is_file(), f"the official SARIF schema is expected at {SARIF_SCHEMA}"
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def _errors(validator: Any, doc: dict[str, Any]) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)]


# ---------------------------------------------------------------- SARIF


def test_sarif_over_samples_is_valid(samples_report: Report, policies: list[Policy], sarif_validator: Any) -> None:
    doc = json.loads(sarif.render(samples_report, RenderOptions(policies=policies)))
    assert _errors(sarif_validator, doc) == []
    broken = json.loads(json.dumps(doc))
    broken["runs"][0]["results"][0]["level"] = "fatal"  # the validator does reject what it should
    assert _errors(sarif_validator, broken) != []


def test_sarif_results_carry_the_findings(samples_report: Report, policies: list[Policy]) -> None:
    run = sarif.sarif_dict(samples_report, policies)["runs"][0]
    driver = run["tool"]["driver"]
    assert (driver["name"], driver["version"]) == ("sunset", "0.1.0")
    assert [r["id"] for r in driver["rules"]] == sorted({f.rule_id for f in samples_report.findings})
    assert len(run["results"]) == len(samples_report.findings) > 0
    for f, result in zip(samples_report.findings, run["results"], strict=True):
        loc = result["locations"][0]
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"] == f.rule_id
        assert result["level"] == {"error": "error", "warning": "warning", "info": "note"}[f.severity]
        assert loc["physicalLocation"]["artifactLocation"] == {"uri": f.location.path, "uriBaseId": "%SRCROOT%"}
        region = loc["physicalLocation"]["region"]
        assert (region["startLine"], region["startColumn"], region["endLine"], region["endColumn"]) == (
            f.location.line, f.location.column, f.location.end_line, f.location.end_column)
        assert loc["logicalLocations"] == [{"fullyQualifiedName": f.location.symbolic}]
        assert result["partialFingerprints"] == {"sunset/v1": f.fingerprint}


def test_sarif_rule_describes_the_policy(samples_report: Report, policies: list[Policy]) -> None:
    rules = {r["id"]: r for r in sarif.sarif_dict(samples_report, policies)["runs"][0]["tool"]["driver"]["rules"]}
    rule = rules["license-scanning-templates"]
    assert rule["name"] == "LicenseScanningTemplates"
    assert rule["shortDescription"] == {"text": "License Scanning CI/CD templates were removed"}
    assert rule["helpUri"] == "https://docs.gitlab.com/update/deprecations/#deprecate-license-scanning-ci-templates"
    assert rule["help"]["markdown"].startswith("# license-scanning-templates\n")
    assert rule["defaultConfiguration"] == {"level": "error"}  # removed in 17.0, target 19.0
    assert rule["properties"]["removed_in"] == "17.0" and "deprecation" in rule["properties"]["tags"]


def test_sarif_input_errors_are_notifications(tmp_path: Path, policies: list[Policy], sarif_validator: Any) -> None:
    (tmp_path / ".gitlab-ci.yml").write_text("job:\n  script: [echo\n", encoding="utf-8")
    report = run_scan([tmp_path], policies)
    assert report.errors
    doc = json.loads(sarif.render(report, RenderOptions(policies=policies)))
    assert _errors(sarif_validator, doc) == []
    [note] = doc["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert note["level"] == "error" and note["message"]["text"] == report.errors[0].message
    assert note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == ".gitlab-ci.yml"


# ---------------------------------------------------------------- Code Quality

PIPELINE = """\
include:
  - template: Security/License-Scanning.gitlab-ci.yml
dast:
  variables:
    DAST_ZAP_CLI_OPTIONS: "-j"
"""
MOVED = """\
# a comment and a new job push everything down
stages: [build, test]

build:
  script: [make]

include:
  - template: Security/License-Scanning.gitlab-ci.yml

dast:
  variables:
    DAST_ZAP_CLI_OPTIONS: "-j"
"""


# at 17.0, what 18.0 and 19.0 remove are warnings; at 19.0 still what GitLab moved to 20.0 (registration
# tokens) and the pending removals; canceled removals are info at both
@pytest.mark.parametrize("target", ["17.0", "19.0"])
def test_codequality_over_samples(target: str, policies: list[Policy]) -> None:
    report = run_scan([ROOT / "samples"], policies, target=target)
    text = codequality.render(report, RenderOptions())
    assert text.startswith("[")  # GitLab rejects a byte order mark
    issues = json.loads(text)
    assert len(issues) == len(report.findings)
    assert {i["severity"] for i in issues} == {"critical", "major", "info"}
    for f, issue in zip(report.findings, issues, strict=True):
        assert issue == {
            "type": "issue",
            "check_name": f.rule_id,
            "description": f.message,
            "categories": ["Compatibility"],
            "fingerprint": f.fingerprint,
            "severity": {"error": "critical", "warning": "major", "info": "info"}[f.severity],
            "location": {"path": f.location.path, "lines": {"begin": f.location.line, "end": f.location.end_line}},
        }
    assert len({i["fingerprint"] for i in issues}) == len(issues)  # GitLab shows equal fingerprints once


def test_codequality_fingerprints_survive_moved_lines(tmp_path: Path, policies: list[Policy]) -> None:
    pipeline = tmp_path / ".gitlab-ci.yml"
    pipeline.write_text(PIPELINE, encoding="utf-8")
    before = json.loads(codequality.render(run_scan([tmp_path], policies), RenderOptions()))
    pipeline.write_text(MOVED, encoding="utf-8")
    after = json.loads(codequality.render(run_scan([tmp_path], policies), RenderOptions()))

    def ident(items: list[dict[str, Any]]) -> dict[str, tuple[str, int]]:
        return {i["fingerprint"]: (i["check_name"], i["location"]["lines"]["begin"]) for i in items}

    assert sorted(ident(before).values()) == [("dast-zap-variables", 5), ("license-scanning-templates", 2)]
    assert sorted(ident(after).values()) == [("dast-zap-variables", 12), ("license-scanning-templates", 8)]
    assert ident(after).keys() == ident(before).keys()  # every line moved; no fingerprint changed


def test_codequality_input_errors(tmp_path: Path, policies: list[Policy]) -> None:
    (tmp_path / ".gitlab-ci.yml").write_text("job:\n  script: [echo\n", encoding="utf-8")
    [issue] = json.loads(codequality.render(run_scan([tmp_path], policies), RenderOptions()))
    assert issue["check_name"] == "sunset-input-error" and issue["severity"] == "major"
    assert issue["location"]["path"] == ".gitlab-ci.yml" and len(issue["fingerprint"]) == 32


# ---------------------------------------------------------------- Markdown


def _finding(**changes: Any) -> dict[str, Any]:
    base = {
        "rule_id": "dast-zap-variables", "title": "DAST ZAP advanced configuration variables were removed",
        "severity": "error", "path": "ci/dast.yml", "line": 4, "column": 5, "end_line": 4, "end_column": 25,
        "message": "`DAST_ZAP_CLI_OPTIONS` configured the ZAP-based DAST analyzer.", "deprecated_in": "15.7",
        "removed_in": "17.0", "replacement": None, "docs_url": "https://docs.gitlab.com/update/deprecations/#dast",
        "fingerprint": "a" * 32, "symbolic_path": "dast.variables.DAST_ZAP_CLI_OPTIONS",
        "snippet": '    DAST_ZAP_CLI_OPTIONS: "-j"',
    }
    return base | changes


SMALL = {
    "version": 1, "tool": {"name": "sunset", "version": "0.1.0"}, "target": "18.0",
    "findings": [
        _finding(rule_id="terraform-templates", title="Terraform CI/CD templates are removed", severity="warning",
                 path="ci/my|infra.yml", line=12, removed_in="19.0",
                 message="Template `Terraform/Base.gitlab-ci.yml` is removed; ask @infra-team about #12",
                 replacement="the OpenTofu component", snippet="  - template: Terraform/Base.gitlab-ci.yml"),
        _finding(),
        _finding(rule_id="job-token-allowlist-enforcement", title="Job token allowlist", severity="info",
                 removed_in=None, path="scripts/deploy.sh", line=3, message="This job reaches `group/a`b` with it",
                 snippet='curl --header "JOB-TOKEN: $CI_JOB_TOKEN" ```x```'),
    ],
    "errors": [{"path": "ci/broken.yml", "line": 3, "message": "invalid YAML: mapping values are not allowed <here>"}],
    "includes": [],
    "summary": {"files_scanned": 4, "findings": 3, "errors": 1, "suppressed": 2, "baselined": 0,
                "by_severity": {"error": 1, "warning": 1, "info": 1}},
}
CI = {
    "CI_PROJECT_URL": "https://gitlab.example.com/group/app", "CI_COMMIT_SHA": "0123abc",
    "CI_PIPELINE_URL": "https://gitlab.example.com/group/app/-/pipelines/99", "CI_PIPELINE_ID": "99",
}
BLOB = "https://gitlab.example.com/group/app/-/blob/0123abc"
SMALL_MD = f"""\
<!-- sunset:report -->

### sunset: 1 finding breaks on GitLab 18.0

Scanned 4 files for GitLab 18.0: 3 findings (1 error, 1 warning, 1 info). Not shown: 2 suppressed inline.

#### Removed in GitLab 17.0 (1)

| Severity | Where | Policy |
| --- | --- | --- |
| error | [`ci/dast.yml:4`]({BLOB}/ci/dast.yml#L4) | [`dast-zap-variables`](https://docs.gitlab.com/update/deprecations/#dast) DAST ZAP advanced configuration variables were removed |

<details><summary>Details and fixes</summary>

**[`ci/dast.yml:4`]({BLOB}/ci/dast.yml#L4)** · `dast-zap-variables`<br>`DAST_ZAP_CLI_OPTIONS` configured the ZAP-based DAST analyzer.

```yaml
    DAST_ZAP_CLI_OPTIONS: "-j"
```

</details>

#### Removed in GitLab 19.0 (1)

| Severity | Where | Policy |
| --- | --- | --- |
| warning | [`ci/my\\|infra.yml:12`]({BLOB}/ci/my%7Cinfra.yml#L12) | [`terraform-templates`](https://docs.gitlab.com/update/deprecations/#dast) Terraform CI/CD templates are removed |

<details><summary>Details and fixes</summary>

**[`ci/my|infra.yml:12`]({BLOB}/ci/my%7Cinfra.yml#L12)** · `terraform-templates`<br>Template `Terraform/Base.gitlab-ci.yml` is removed; ask \\@infra-team about \\#12<br>**Fix:** the OpenTofu component

```yaml
  - template: Terraform/Base.gitlab-ci.yml
```

</details>

#### Removal not scheduled (1)

| Severity | Where | Policy |
| --- | --- | --- |
| info | [`scripts/deploy.sh:3`]({BLOB}/scripts/deploy.sh#L3) | [`job-token-allowlist-enforcement`](https://docs.gitlab.com/update/deprecations/#dast) Job token allowlist |

<details><summary>Details and fixes</summary>

**[`scripts/deploy.sh:3`]({BLOB}/scripts/deploy.sh#L3)** · `job-token-allowlist-enforcement`<br>This job reaches `group/a`b\\` with it

````shell
curl --header "JOB-TOKEN: $CI_JOB_TOKEN" ```x```
````

</details>

#### Not checked (1)

- `ci/broken.yml:3`: invalid YAML: mapping values are not allowed \\<here\\>

<sub>sunset 0.1.0 · [pipeline 99](https://gitlab.example.com/group/app/-/pipelines/99) · this comment is updated on every pipeline</sub>
"""  # noqa: E501 — the table rows are long on purpose: they are the exact text GitLab receives


def test_markdown_exact() -> None:
    assert markdown.render_json(SMALL, CI) == SMALL_MD


def test_markdown_without_ci_has_no_links() -> None:
    body = markdown.render_json(SMALL, {})
    assert "/-/blob/" not in body and "[pipeline" not in body
    assert "| error | `ci/dast.yml:4` | [`dast-zap-variables`]" in body


def test_markdown_all_clear() -> None:
    clean = report_dict(Report(target="19.0", files_scanned=6, suppressed=1, baselined=3))
    assert markdown.render_json(clean, {}) == (
        "<!-- sunset:report -->\n\n### sunset: all clear for GitLab 19.0\n\n"
        "No deprecated or removed GitLab features in 6 scanned files. "
        "Not shown: 1 suppressed inline and 3 in the baseline.\n\n"
        "<sub>sunset 0.1.0 · this comment is updated on every pipeline</sub>\n"
    )


@pytest.mark.parametrize(
    ("text", "escaped"),
    [
        ("@all look at #1, !2, ~bug, %v1, $snip, &epic", r"\@all look at \#1, \!2, \~bug, \%v1, \$snip, \&epic"),
        ("<img src=x onerror=alert(1)>", r"\<img src=x onerror=alert\(1\)\>"),
        ("a | b *c* _d_ [e](f)", r"a \| b \*c\* \_d\_ \[e\]\(f\)"),
        ("keep `code|span` as code", r"keep `code|span` as code"),
        ("line\nbreak", "line break"),
    ],
)
def test_markdown_escapes_user_text(text: str, escaped: str) -> None:
    assert markdown.inline(text) == escaped


def test_markdown_is_capped(samples_report: Report) -> None:
    many = report_dict(samples_report)
    many["findings"] = [dict(f, line=n + 1) for n in range(40) for f in many["findings"]]
    total = len(many["findings"])  # 40 copies of every sample finding
    body = markdown.render_json(many, CI, max_chars=20_000)
    assert len(body) <= 20_000 and body.startswith(markdown.MARKER + "\n")
    shown = body.count("\n| error |") + body.count("\n| warning |") + body.count("\n| info |")
    assert 0 < shown < total
    assert f"_{total - shown} more findings not shown to keep this comment short;" in body
    assert len(markdown.render_json(many, CI)) <= markdown.MAX_CHARS


def test_markdown_over_samples_links_every_row(samples_report: Report) -> None:
    body = markdown.render_json(report_dict(samples_report), CI)
    assert body.count(f"]({BLOB}/") == 2 * len(samples_report.findings)  # table row and details
    assert body.index("Removed in GitLab 17.0") < body.index("Removed in GitLab 18.0") < body.index("19.0 (")
