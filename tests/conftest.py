"""Shared helpers: the shipped policies, loaded once, and a scan of a directory."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from scanner.core.results import Report
from scanner.core.versions import Version
from scanner.engine.scan import ScanOptions, scan
from scanner.rules.catalog import builtin_policy_dir, load_policies
from scanner.rules.policy import Policy

ROOT = Path(__file__).resolve().parent.parent


def pytest_configure(config: pytest.Config) -> None:
    """The compiled-catalog cache of this run (and of the commands it starts) in a folder of its own."""
    os.environ["SUNSET_CACHE_DIR"] = tempfile.mkdtemp(prefix="sunset-test-cache-")


@pytest.fixture(scope="session")
def policies() -> list[Policy]:
    return load_policies([builtin_policy_dir()])


def run_scan(paths: list[Path], policies: list[Policy], target: str = "19.0") -> Report:
    return scan(paths, policies, ScanOptions(Version.parse(target)))


def where(report: Report) -> set[tuple[str, str, int, int]]:
    """The exact (policy, path, line, column) of every finding."""
    return {(f.rule_id, f.location.path, f.location.line, f.location.column) for f in report.findings}
