"""Shared helpers: the shipped policies, loaded once, a scan of a directory, and `sunset` as a user runs it.

Hypothesis runs the `dev` profile (few examples, a quick inner loop) unless `SUNSET_TEST_HYPOTHESIS`
names another: `ci` runs more examples, derandomised so that a run repeats the one before it. A test
that names its own count takes it through `examples`, so that the `dev` profile scales it down too.
"""

from __future__ import annotations

import io
import logging
import os
import pty
import select
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import BinaryIO, Literal

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
    """A pinned environment, and the compiled-catalog cache of this run (its workers and the commands
    it starts) in a folder of its own."""
    # SUNSET_UPDATE_* and SUNSET_TEST_* are the tests' own switches (e.g. regenerating golden files).
    own = [n for n in os.environ
           if n.startswith(("CI_", "SUNSET_")) and not n.startswith(("SUNSET_UPDATE_", "SUNSET_TEST_"))]
    for name in [*_DROPPED_ENV, *own]:
        os.environ.pop(name, None)
    os.environ.update(_PINNED_ENV)
    # One cache for the run: xdist workers inherit the folder the controller made (SUNSET_TEST_ names
    # are kept above), so the catalog is compiled once, not once per worker.
    cache = os.environ.get("SUNSET_TEST_CACHE_DIR") if os.environ.get("PYTEST_XDIST_WORKER") else None
    if not cache or not os.path.isdir(cache):
        cache = os.environ["SUNSET_TEST_CACHE_DIR"] = tempfile.mkdtemp(prefix="sunset-test-cache-")
    os.environ["SUNSET_CACHE_DIR"] = cache
    # Compiled modules are cached (Python's default) even where the environment turns that off: the
    # tests start Python many times (the commands they run, the imports they check), and each start
    # would compile the scanner again, as pytest would rewrite every test module on every run.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.dont_write_bytecode = False


settings.register_profile("dev", max_examples=25, deadline=None)
settings.register_profile("ci", max_examples=300, deadline=None, derandomize=True, database=None)
PROFILE = os.environ.get("SUNSET_TEST_HYPOTHESIS", "dev")
settings.load_profile(PROFILE)


def examples(count: int) -> int:
    """The examples a property test that names its own `count` runs: all of them, but a fifth (at
    least the profile's own number) in the `dev` profile of the inner loop; CI runs `ci`."""
    if PROFILE != "dev":
        return count
    return max(settings.get_profile("dev").max_examples, count // 5)


def sunset(*args: str | Path, cwd: Path | None = None, stdin: bytes | BinaryIO | None = None,
           env: Mapping[str, str | None] | None = None, process: bool = False, venv: Path | None = None,
           tty: Literal["stdout", "stderr"] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`sunset ARGS` as a user runs it: its exit status and what it printed. It runs in this process
    (`scanner.cli.main`), with the working directory, standard input, standard output and error and
    the environment (the tests' pinned one, `env` added; None removes a variable) set for the call and
    put back after. `process=True` runs the console script of this interpreter's environment (`venv`:
    of that one) instead, for what only a process shows: the entry point, a real pipe, a file as
    standard input (`stdin` an open file), a command that must not hang (`timeout`), a pseudo-terminal
    as its standard output or error (`tty`: what the terminal received, its line ends `\r\n`); it
    inherits no `PYTHONPATH` unless `env` gives one."""
    argv = [str(a) for a in args]
    environ = {**os.environ, **{k: v for k, v in (env or {}).items() if v is not None}}
    for name in [k for k, v in (env or {}).items() if v is None]:
        environ.pop(name, None)
    if process or venv is not None or tty is not None:
        script = venv / "bin" / "sunset" if venv is not None else Path(sys.executable).with_name("sunset")
        assert script.exists(), f"{script}: install the project first (bash .ci/setup)"
        for name in ("PYTHONPATH", "PYTHONHOME"):
            if name not in (env or {}):
                environ.pop(name, None)
        if tty is not None:
            return _on_a_terminal([str(script), *argv], tty, cwd, environ, timeout)
        if isinstance(stdin, (bytes, type(None))):
            done = subprocess.run([str(script), *argv], input=stdin or b"", capture_output=True, cwd=cwd,
                                  env=environ, timeout=timeout)
        else:
            done = subprocess.run([str(script), *argv], stdin=stdin, capture_output=True, cwd=cwd, env=environ,
                                  timeout=timeout)
        return subprocess.CompletedProcess(argv, done.returncode, done.stdout.decode(), done.stderr.decode())
    assert isinstance(stdin, (bytes, type(None))), "an open file as standard input: process=True"
    out, err = io.BytesIO(), io.BytesIO()
    streams = (io.TextIOWrapper(out, encoding="utf-8"), io.TextIOWrapper(err, encoding="utf-8"),
               io.TextIOWrapper(io.BytesIO(stdin or b""), encoding="utf-8"))
    saved = sys.stdout, sys.stderr, sys.stdin, dict(os.environ), os.getcwd()
    loggers = _logging_state()  # a command's process-wide logging (`--verbose`) ends with the call
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
        _restore_logging(loggers)


def _logging_state() -> dict[str, tuple[int, list[logging.Handler]]]:
    named = {name: logger for name, logger in logging.root.manager.loggerDict.items()
             if isinstance(logger, logging.Logger)}
    return {name: (logger.level, list(logger.handlers)) for name, logger in [("", logging.root), *named.items()]}


def _restore_logging(state: dict[str, tuple[int, list[logging.Handler]]]) -> None:
    for name, logger in [("", logging.root), *logging.root.manager.loggerDict.items()]:
        if isinstance(logger, logging.Logger):
            level, handlers = state.get(name, (logging.NOTSET, []))
            logger.setLevel(level)
            logger.handlers[:] = handlers


def _on_a_terminal(command: list[str], tty: Literal["stdout", "stderr"], cwd: Path | None,
                   environ: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    """`command` with a pseudo-terminal as its standard output or error (`tty`), the other stream
    captured and standard input empty; killed after `timeout` seconds without output."""
    leader, follower = pty.openpty()
    with tempfile.TemporaryFile() as other:
        outputs = (follower, other) if tty == "stdout" else (other, follower)
        proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=outputs[0], stderr=outputs[1], cwd=cwd,
                                env=environ)
        os.close(follower)
        seen = b""
        while True:
            ready, _, _ = select.select([leader], [], [], timeout)
            if not ready:
                proc.kill()
                break
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the process closed the terminal's last open end
                break
            if not chunk:
                break
            seen += chunk
        os.close(leader)
        code = proc.wait(timeout=timeout)
        other.seek(0)
        rest = other.read().decode()
    shown = seen.decode()
    return subprocess.CompletedProcess(command[1:], code, *((shown, rest) if tty == "stdout" else (rest, shown)))


# Fixtures that start a real service: a test using one is an integration test.
_SERVICE_FIXTURES = frozenset({"broker", "release", "venv"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if _SERVICE_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.integration)
    # The tests that take seconds first, the rest in their order: xdist hands them out in this order,
    # so the quick ones fill the gaps at the end instead of one worker waiting on a slow one.
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


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
