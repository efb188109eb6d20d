"""Shared helpers: the shipped policies, loaded once, and a scan of a directory."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from scanner import __version__
from scanner.core.results import Report
from scanner.core.versions import Version
from scanner.engine.scan import ScanOptions, scan
from scanner.rules.catalog import builtin_policy_dir, load_policies
from scanner.rules.policy import Policy

ROOT = Path(__file__).resolve().parent.parent
WHEEL = f"gitlab_sunset-{__version__}-py3-none-any.whl"


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


@pytest.fixture(scope="session")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`.ci/release` on the committed tree: a wheel and an sdist that passed `twine check --strict`."""
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run(["bash", str(ROOT / ".ci" / "release"), "--outdir", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "PASSED" in done.stdout
    return out


@pytest.fixture(scope="session")
def venv(release: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty virtualenv with the release's wheel installed (its dependencies from the index)."""
    env = tmp_path_factory.mktemp("venv") / "v"
    subprocess.run([sys.executable, "-m", "venv", str(env)], check=True, timeout=120)
    pip = [str(env / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    done = subprocess.run([*pip, str(release / WHEEL)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return env
