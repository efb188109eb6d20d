"""The distribution: metadata, the package list, and a release built from a fresh clone that installs
into an empty virtualenv and scans the samples (docs/release.md).

The release test runs `.ci/release` (build + `twine check --strict`) on the committed tree, so what it
proves is what a tag would ship; pip installs the wheel's dependencies from the configured index.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from scanner import __version__

from conftest import ROOT, WHEEL, sunset

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_metadata_names_the_distribution_and_is_complete() -> None:
    project = PYPROJECT["project"]
    assert project["name"] == "gitlab-sunset"
    assert project["license"] == "MIT"
    assert project["license-files"] == ["LICENSE"]
    assert project["requires-python"] == ">=3.11"
    assert project["dynamic"] == ["version"]
    assert project["scripts"] == {"sunset": "gitlab_sunset:main"}
    assert set(project["urls"]) == {"Homepage", "Documentation", "Repository", "Issues", "Changelog"}
    assert "Programming Language :: Python :: 3.11" in project["classifiers"]
    assert not [c for c in project["classifiers"] if c.startswith("License ::")]  # PEP 639: the SPDX string only


def test_every_folder_is_a_listed_package() -> None:
    """A folder missing from `packages` is missing from the wheel (the editable install hides it)."""
    folders = {
        ".".join(p.relative_to(ROOT).parts)
        for pkg in ("scanner", "streams")
        for p in [ROOT / pkg, *(ROOT / pkg).rglob("*")]
        if p.is_dir() and not p.is_symlink() and (p / "__init__.py").is_file()
    }
    groups = {f"scanner.policies.{p.name}" for p in (ROOT / "policies").iterdir() if p.is_dir()}
    setuptools = PYPROJECT["tool"]["setuptools"]
    assert set(setuptools["packages"]) == folders | groups | {"scanner.policies"}
    assert set(setuptools["package-data"]) == groups | {"scanner.policies", "scanner", "streams"}
    assert os.readlink(ROOT / "scanner" / "policies") == "../policies"


def test_missing_extra_names_the_distribution() -> None:
    for name in ("cli.py", "commands.py", "dev.py"):
        text = (ROOT / "streams" / name).read_text(encoding="utf-8")
        assert "pip install 'gitlab-sunset[stream]'" in text or "pip install 'gitlab-sunset[{extra}]'" in text
        assert "'sunset[stream]'" not in text


def test_the_rocksdb_store_without_rocksdict_names_its_extra(tmp_path: Path) -> None:
    """`SUNSET_STORE=rocksdb://` in an install without the `rocksdb` extra: one line naming it,
    exit 2, before Faust starts (rocksdict made unimportable in this process)."""
    code = ("import sys; sys.modules['rocksdict'] = None; from gitlab_sunset import main; "
            "sys.exit(main(['stream', 'worker', '--data-dir', sys.argv[1]]))")
    environ = {k: v for k, v in os.environ.items() if not k.startswith("SUNSET_")}
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True,
                          env={**environ, "SUNSET_STORE": "rocksdb://"}, timeout=120)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == ("sunset stream: rocksdict is missing; install the extra: "
                           "pip install 'gitlab-sunset[rocksdb]'\n")


def test_release_builds_wheel_and_sdist(release: Path) -> None:
    assert sorted(p.name for p in release.iterdir()) == sorted([WHEEL, f"gitlab_sunset-{__version__}.tar.gz"])


def test_wheel_in_an_empty_venv_scans_the_samples_as_the_tree_does(venv: Path) -> None:
    assert sunset("--version", venv=venv, cwd=ROOT).stdout == f"sunset {__version__}\n"
    installed = sunset("scan", "samples", "--format", "json", venv=venv, cwd=ROOT)
    here = sunset("scan", "samples", "--format", "json", cwd=ROOT)
    assert installed.returncode == 1 and here.returncode == 1
    assert json.loads(installed.stdout) == json.loads(here.stdout)
    assert len(json.loads(installed.stdout)["findings"]) > 0


def test_shadowing_scanner_is_refused(venv: Path, tmp_path: Path) -> None:
    fake = tmp_path / "scanner"
    fake.mkdir()
    (fake / "__init__.py").write_text("")
    done = sunset("--version", venv=venv, cwd=ROOT, env={"PYTHONPATH": str(tmp_path)})
    site = next((venv / "lib").glob("python3.*/site-packages"))
    assert done.returncode == 2
    assert done.stderr == (
        f"sunset: `scanner` resolves to {fake / '__init__.py'}, not to gitlab-sunset's own package in {site} "
        "(a folder on PYTHONPATH or in the working directory shadows it); "
        "run sunset from its own environment: pipx install gitlab-sunset\n"
    )


def test_a_distribution_that_overwrote_streams_is_refused(venv: Path, tmp_path: Path) -> None:
    """Another distribution installing a top-level `streams` over ours: pip lets it, sunset says so."""
    site = next((venv / "lib").glob("python3.*/site-packages"))
    init = site / "streams" / "__init__.py"
    original = init.read_text(encoding="utf-8")
    init.write_text('"""Someone else\'s streams."""\n', encoding="utf-8")
    try:
        done = sunset("scan", "samples", venv=venv, cwd=ROOT)
    finally:
        init.write_text(original, encoding="utf-8")
    assert done.returncode == 2
    assert done.stderr == (
        f"sunset: {init} belongs to another distribution that installed a top-level `streams` over gitlab-sunset's; "
        "install sunset in its own environment: pipx install gitlab-sunset\n"
    )
    assert re.fullmatch(r"sunset \S+\n", sunset("--version", venv=venv, cwd=ROOT).stdout)


def _runner_checkout(into: Path) -> None:
    """This repository's HEAD as a GitLab runner checks it out: a fetch of the commit and `git checkout`
    of its id, so HEAD is detached and no local branch exists (git's detached-HEAD advice is on)."""
    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(into), "-c", "advice.detachedHead=true", *args], check=True,
                       capture_output=True, timeout=120)

    into.mkdir()
    git("init", "--quiet")
    git("fetch", "--quiet", "--depth", "1", ROOT.as_uri(), "HEAD")  # the commit alone: a runner fetches shallow too
    git("checkout", "--quiet", "--force", "FETCH_HEAD")


@pytest.mark.slow
def test_release_refuses_a_tag_that_does_not_name_the_version(tmp_path: Path) -> None:
    """In a checkout of this repository as CI makes one (tags are never made in the real one by a test)."""
    clone = tmp_path / "clone"
    _runner_checkout(clone)
    subprocess.run(["git", "-C", str(clone), "-c", "user.name=t", "-c", "user.email=t@example.com", "tag", "-a",
                    "v9.9.9", "-m", "wrong"], check=True, timeout=60)
    done = subprocess.run(["bash", str(clone / ".ci" / "release"), "--tag", "v9.9.9", "--outdir", str(tmp_path / "d")],
                          capture_output=True, text=True, timeout=300,
                          env=os.environ | {"SUNSET_RELEASE_PYTHON": sys.executable})
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (f"release: tag v9.9.9 does not name version {__version__} (scanner/__init__.py); "
                           f"expected v{__version__}\n")
    assert not (tmp_path / "d").exists()
