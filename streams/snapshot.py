"""Seed the allowlists from what GitLab's REST API returned, as snapshot records.

The file is one JSON object, the API responses stored as they came (all pages concatenated):

    {"taken_at": "2025-05-01T00:00:00Z",
     "projects": {"group/app": {"inbound_enabled": true,
                                "allowlist": [<GET /projects/:id/job_token_scope/allowlist items>],
                                "groups_allowlist": [<GET /projects/:id/job_token_scope/groups_allowlist items>]}}}

`inbound_enabled` is `GET /projects/:id/job_token_scope`'s field of that name (optional). Each
project becomes one `sunset_job_token_allowlist_snapshot` record, processed like an event: the
replay reads them before the stream, `sunset stream publish --allowlist-snapshot` sends them to
the worker's input topic.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from streams.eventtypes import SNAPSHOT


class SnapshotError(ValueError):
    """The snapshot file is not in the documented shape."""


def load_records(path: Path) -> list[dict[str, Any]]:
    """The snapshot file as records, one per project, in file order."""
    try:
        doc = json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise SnapshotError(f"{path}: {exc}") from None
    return records(doc, str(path))


def records(doc: Any, where: str = "snapshot") -> list[dict[str, Any]]:
    """Validate the snapshot document and turn it into records."""
    if not isinstance(doc, dict) or not isinstance(doc.get("projects"), dict) or not doc.get("taken_at"):
        raise SnapshotError(f"{where}: expected {{\"taken_at\": …, \"projects\": {{path: {{…}}}}}}")
    out = []
    for project, scope in doc["projects"].items():
        if not isinstance(scope, dict) or not isinstance(scope.get("allowlist", []), list):
            raise SnapshotError(f"{where}: projects.{project}: expected an object with an allowlist array")
        out.append({
            "event_type": SNAPSHOT,
            "project": project,
            "taken_at": doc["taken_at"],
            "allowlist": scope.get("allowlist", []),
            "groups_allowlist": scope.get("groups_allowlist", []),
            "inbound_enabled": scope.get("inbound_enabled"),
        })
    return out
