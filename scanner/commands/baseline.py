"""The baseline file: today's findings recorded by fingerprint (`--write-baseline`), read back to
report only what is new (`--baseline`, or `baseline:` in the repository's configuration).

It is read through the bounded regular-file reader (a FIFO, a device or a folder is refused at once);
a baseline the repository's own configuration names must be inside that repository.
"""

from __future__ import annotations

import json
from pathlib import Path

from scanner.core.exits import UsageError
from scanner.core.files import ReadProblem, inside, read_settings_text
from scanner.core.results import Report
from scanner.core.writing import write_file

BASELINE_VERSION = 1
# A baseline holds one short record per finding: 64 MiB is millions of them.
BASELINE_MAX_BYTES = 64 * 1024 * 1024


def read_baseline(path: Path, repository: Path | None = None) -> frozenset[str]:
    """`repository`: the baseline was named by a repository's own configuration, so it must be inside it."""
    if repository is not None and not inside(path, repository):
        raise UsageError(f"{path}: the baseline named by the configuration is outside the repository ({repository})")
    text = read_settings_text(path, BASELINE_MAX_BYTES)
    if isinstance(text, ReadProblem):
        raise UsageError(f"{path}: cannot read the baseline: {text.message.removesuffix('; not scanned')}")
    try:
        data = json.loads(text)
        return frozenset(str(item["fingerprint"]) for item in data["findings"])
    except (ValueError, KeyError, TypeError, RecursionError) as exc:
        reason = "nested too deeply" if isinstance(exc, RecursionError) else exc
        raise UsageError(f"{path}: not a sunset baseline file ({reason})") from None


def write_baseline(path: Path, report: Report) -> None:
    items = sorted(
        ({"fingerprint": f.fingerprint, "rule_id": f.rule_id, "path": f.location.path} for f in report.findings),
        key=lambda i: (i["path"], i["rule_id"], i["fingerprint"]),
    )
    reason = write_file(path, json.dumps({"version": BASELINE_VERSION, "findings": items}, indent=2) + "\n")
    if reason is not None:
        raise UsageError(f"cannot write the baseline to {path}: {reason}")
