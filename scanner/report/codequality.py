"""GitLab Code Quality: the JSON array GitLab reads from `artifacts:reports:codequality`.

GitLab reads a subset of the CodeClimate issue format (docs.gitlab.com, "Code Quality", section
"Implement a custom tool"): `description`, `check_name`, `fingerprint`, `severity` (`info`, `minor`,
`major`, `critical`, `blocker`), `location.path` (relative to the repository root) and
`location.lines.begin`; it ignores the other CodeClimate fields and rejects a byte order mark.
We add `type`, `categories` and `location.lines.end` so the file is also a valid CodeClimate report.

The widget compares fingerprints between the source and target branch to tell new findings from
fixed ones, and shows findings with the same fingerprint once; ours hash policy, path, symbolic
path and matched value (never the line), so a finding keeps its fingerprint when lines move.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from scanner.core.results import Finding, InputError, Report

if TYPE_CHECKING:
    from scanner.report.options import RenderOptions

# The one place our severities become CodeClimate's.
#   error   → critical: removed at or before the target release; it breaks on upgrade.
#   warning → major:    deprecated, removed later (or not scheduled); plan the change.
#   info    → info:     informational.
# `blocker` is left out on purpose: nothing sunset finds breaks the pipeline as it runs today,
# and GitLab's widget reserves its loudest marker for that. `minor` is unused.
SEVERITY: dict[str, str] = {"error": "critical", "warning": "major", "info": "info"}
# A file sunset could not read was not checked at all; a reviewer should see that.
INPUT_ERROR_SEVERITY = "major"
INPUT_ERROR_CHECK = "sunset-input-error"
CATEGORY = "Compatibility"


def _issue(f: Finding) -> dict[str, Any]:
    loc = f.location
    return {
        "type": "issue",
        "check_name": f.rule_id,
        "description": f.message,
        "categories": [CATEGORY],
        "fingerprint": f.fingerprint,
        "severity": SEVERITY[f.severity],
        "location": {"path": loc.path, "lines": {"begin": loc.line, "end": max(loc.line, loc.end_line)}},
    }


def _error_issue(e: InputError) -> dict[str, Any]:
    # No line in the hash: the error keeps its identity while the file around it changes.
    digest = hashlib.sha256(f"{INPUT_ERROR_CHECK}\0{e.path}".encode()).hexdigest()[:32]
    return {
        "type": "issue",
        "check_name": INPUT_ERROR_CHECK,
        "description": f"sunset could not check this file: {e.message}",
        "categories": [CATEGORY],
        "fingerprint": digest,
        "severity": INPUT_ERROR_SEVERITY,
        "location": {"path": e.path, "lines": {"begin": e.line or 1}},
    }


def issues(report: Report) -> list[dict[str, Any]]:
    return [_issue(f) for f in report.findings] + [_error_issue(e) for e in report.errors]


def render(report: Report, options: RenderOptions) -> str:
    return json.dumps(issues(report), indent=2, ensure_ascii=False) + "\n"
