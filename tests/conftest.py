"""Shared helpers: the shipped policies, loaded once, a scan of a directory, and `sunset` as a user runs it.

Hypothesis runs the `dev` profile (few examples, a quick inner loop) unless `SUNSET_TEST_HYPOTHESIS`
names another: `ci` runs more examples, derandomised so that a run repeats the one before it.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

import pytest
from hypothesis import settings

from scanner import __version__
from scanner.cli import main
from scanner.core.results import Report
from scanner.core.tree import Tree
from scanner.core.versions import Version
from scanner.engine.scan import ScanOptions, scan
from scanner.rules.catalog import builtin_policy_dir, load_policies
from scanner.rules.policy import Policy

ROOT = Path(__file__).resolve().parent.parent
WHEEL = f"gitlab_sunset-{__version__}-py3-none-any.whl"


# What a developer's shell or a CI image exports must not change what the tests see: terminal width
# and colour decide the text report's layout, proxies would route the tests' loopback servers away.
_PINNED_ENV = {"TERM": "xterm-256color", "LANG": "C.UTF-8", "NO_PROXY": "127.0.0.1,localhost",
               "no_proxy": "127.0.0.1,localhost"}
_DROPPED_ENV = ("COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "HTTP_PROXY",
                "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy", "SUNSET_GITLAB_TOKEN",
                "GITLAB_CI")


def pytest_configure(config: pytest.Config) -> None:
    """A pinned environment, and the compiled-catalog cache of this run (and of the commands it starts)
    in a folder of its own."""
    # SUNSET_UPDATE_* and SUNSET_TEST_* are the tests' own switches (e.g. regenerating golden files).
    own = [n for n in os.environ
           if n.startswith(("CI_", "SUNSET_")) and not n.startswith(("SUNSET_UPDATE_", "SUNSET_TEST_"))]
    for name in [*_DROPPED_ENV, *own]:
        os.environ.pop(name, None)
    os.environ.update(_PINNED_ENV)
    os.environ["SUNSET_CACHE_DIR"] = tempfile.mkdtemp(prefix="sunset-test-cache-")


settings.register_profile("dev", max_examples=25, deadline=None)
settings.register_profile("ci", max_examples=300, deadline=None, derandomize=True, database=None)
settings.load_profile(os.environ.get("SUNSET_TEST_HYPOTHESIS", "dev"))


def sunset(*args: str | Path, cwd: Path | None = None, stdin: bytes | None = None,
           env: Mapping[str, str | None] | None = None, process: bool = False, venv: Path | None = None,
           timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`sunset ARGS` as a user runs it: its exit status and what it printed. It runs in this process
    (`scanner.cli.main`), with the working directory, standard input, standard output and error and
    the environment (the tests' pinned one, `env` added; None removes a variable) set for the call and
    put back after. `process=True` runs the console script of this interpreter's environment (`venv`:
    of that one) instead, for what only a process shows: the entry point, a real pipe, a command that
    must not hang (`timeout`); it inherits no `PYTHONPATH` unless `env` gives one."""
    argv = [str(a) for a in args]
    environ = {**os.environ, **{k: v for k, v in (env or {}).items() if v is not None}}
    for name in [k for k, v in (env or {}).items() if v is None]:
        environ.pop(name, None)
    if process or venv is not None:
        script = venv / "bin" / "sunset" if venv is not None else Path(sys.executable).with_name("sunset")
        assert script.exists(), f"{script}: install the project first (bash .ci/setup)"
        for name in ("PYTHONPATH", "PYTHONHOME"):
            if name not in (env or {}):
                environ.pop(name, None)
        done = subprocess.run([str(script), *argv], input=stdin or b"", capture_output=True, cwd=cwd, env=environ,
                              timeout=timeout)
        return subprocess.CompletedProcess(argv, done.returncode, done.stdout.decode(), done.stderr.decode())
    out, err = io.BytesIO(), io.BytesIO()
    streams = (io.TextIOWrapper(out, encoding="utf-8"), io.TextIOWrapper(err, encoding="utf-8"),
               io.TextIOWrapper(io.BytesIO(stdin or b""), encoding="utf-8"))
    saved = sys.stdout, sys.stderr, sys.stdin, dict(os.environ), os.getcwd()
    try:
        sys.stdout, sys.stderr, sys.stdin = streams
        os.environ.clear()
        os.environ.update(environ)
        if cwd is not None:
            os.chdir(cwd)
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse: a usage error or --help
            code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
        streams[0].flush()
        streams[1].flush()
        return subprocess.CompletedProcess(argv, code, out.getvalue().decode(), err.getvalue().decode())
    finally:
        sys.stdout, sys.stderr, sys.stdin = saved[:3]
        os.environ.clear()
        os.environ.update(saved[3])
        os.chdir(saved[4])


# Fixtures that start a real service: a test using one is an integration test.
_SERVICE_FIXTURES = frozenset({"broker", "release", "venv"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if _SERVICE_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def policies() -> list[Policy]:
    return load_policies([builtin_policy_dir()])


def run_scan(paths: list[Path], policies: list[Policy], target: str = "19.0") -> Report:
    return scan(paths, policies, ScanOptions(Version.parse(target)))


def assert_positions_inside(tree: Tree, lines: int) -> None:
    """Every position a reader gave (its tree, the documents embedded in it, its problems) is on a line
    of the text; a property the reader tests check on any text."""
    for sub in [tree, *(inner for _, inner in tree.embedded)]:
        for entry in sub.table.values():
            spans = [s for pair in entry.values() for s in pair] if isinstance(entry, dict) else entry
            for line, column, end_line, end_column in spans:
                assert 1 <= line <= end_line <= lines and column >= 1 and end_column >= 1
    for line, _ in tree.warnings + tree.notices:
        assert line is None or 1 <= line <= lines


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
