"""The compiled catalog is cached by content: a warm start gives the same policies, any edit to a
policy file is a miss, and a cache that is broken or cannot be written never stops a scan."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scanner.rules import cache, catalog
from scanner.rules.catalog import PolicyLoadError, builtin_policy_dir, load_policies

POLICY = """\
title: A removed CI/CD variable
summary: s
message: "`{match}` is gone"
rationale: r
remediation: r
removed_in: "18.0"
breaking: true
origin: gitlab
references: [{title: t, url: "https://docs.gitlab.com/x"}]
applies_to: [gitlab-ci]
match: {kind: ci-variable, names: [OLD_NAME]}
example: {before: a, after: b}
"""


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("SUNSET_CACHE_DIR", str(folder))
    return folder


def _policies(tmp_path: Path, text: str = POLICY) -> Path:
    folder = tmp_path / "policies"
    folder.mkdir(exist_ok=True)
    (folder / "old-variable.yaml").write_text(text)
    return folder


def _no_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(path: Path, data: bytes) -> None:
        raise AssertionError(f"{path} parsed although the catalog is cached")

    monkeypatch.setattr(catalog, "_load_one", refuse)


def test_warm_load_comes_from_the_cache(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cold = load_policies([builtin_policy_dir()])
    assert [p.name for p in cache_dir.iterdir()] == [f"catalog-{_key([builtin_policy_dir()])}.pickle"]
    _no_parsing(monkeypatch)
    warm = load_policies([builtin_policy_dir()])
    assert [p.id for p in warm] == [p.id for p in cold]
    assert [(p.matcher, p.data, p.applies_to, p.source) for p in warm] == [
        (p.matcher, p.data, p.applies_to, p.source) for p in cold
    ]


def _key(dirs: list[Path]) -> str:
    return cache.catalog_key(catalog._policy_files(dirs))


def test_an_edited_policy_is_a_miss(cache_dir: Path, tmp_path: Path) -> None:
    folder = _policies(tmp_path)
    (first,) = load_policies([folder])
    assert first.matcher.names == frozenset({"OLD_NAME"})  # type: ignore[attr-defined]
    _policies(tmp_path, POLICY.replace("OLD_NAME", "OTHER_NAME"))
    (second,) = load_policies([folder])
    assert second.matcher.names == frozenset({"OTHER_NAME"})  # type: ignore[attr-defined]
    assert len(list(cache_dir.glob("catalog-*.pickle"))) == 2


def test_an_added_file_is_a_miss_and_its_problem_is_reported(cache_dir: Path, tmp_path: Path) -> None:
    folder = _policies(tmp_path)
    load_policies([folder])
    (folder / "Bad_Name.yaml").write_text(POLICY)
    with pytest.raises(PolicyLoadError, match=r"Bad_Name.yaml:1: id: file stem 'Bad_Name' is not"):
        load_policies([folder])


@pytest.mark.parametrize("junk", [b"", b"not a pickle", b"\x80\x05N.", b"\x80\x05\x95"])
def test_a_broken_cache_file_is_rebuilt(cache_dir: Path, tmp_path: Path, junk: bytes) -> None:
    folder = _policies(tmp_path)
    load_policies([folder])
    (cached,) = cache_dir.glob("catalog-*.pickle")
    cached.write_bytes(junk)
    (policy,) = load_policies([folder])
    assert policy.id == "old-variable"
    assert cached.read_bytes() != junk


def test_a_cache_that_cannot_be_written_costs_only_speed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("")
    monkeypatch.setenv("SUNSET_CACHE_DIR", str(blocked / "cache"))
    (policy,) = load_policies([_policies(tmp_path)])
    assert policy.id == "old-variable"


def test_the_cache_can_be_turned_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SUNSET_CACHE_DIR", "off")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    load_policies([_policies(tmp_path)])
    assert not (tmp_path / "xdg").exists() and not (tmp_path / "home").exists()


def test_old_catalogs_are_pruned(cache_dir: Path, tmp_path: Path) -> None:
    folder = _policies(tmp_path)
    for n in range(cache.KEEP + 3):
        _policies(tmp_path, POLICY.replace("OLD_NAME", f"NAME_{n}"))
        load_policies([folder])
    assert len(list(cache_dir.glob("catalog-*.pickle"))) == cache.KEEP


def test_a_scan_with_a_warm_cache_finds_the_same(cache_dir: Path, tmp_path: Path) -> None:
    """Through the command, cold then warm: the same report, byte for byte."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".gitlab-ci.yml").write_text("variables:\n  OLD_NAME: x\njob:\n  script: [echo]\n")
    command = [sys.executable, "-m", "scanner.cli", "scan", str(repo), "--policies", str(_policies(tmp_path)),
               "--format", "json"]
    cold = subprocess.run(command, capture_output=True, text=True)
    warm = subprocess.run(command, capture_output=True, text=True)
    assert cold.returncode == warm.returncode == 1
    assert '"rule_id": "old-variable"' in cold.stdout
    assert warm.stdout == cold.stdout
    assert len(list(cache_dir.glob("catalog-*.pickle"))) == 1
    shutil.rmtree(cache_dir)


def test_a_warm_scan_imports_no_validation(cache_dir: Path, tmp_path: Path) -> None:
    """pydantic and the policy schema are for cache misses only (the matcher table, which drives every
    scan's evaluation, imports neither)."""
    (tmp_path / ".gitlab-ci.yml").write_text("job:\n  script: [echo]\n")
    code = (
        "import sys, scanner.cli as c; c.main(['scan', sys.argv[1]]);"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'pydantic_core')"
        " or m == 'scanner.rules.schema'))"
    )
    cold = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True)
    assert "'scanner.rules.schema'" in cold.stdout.splitlines()[-1]
    warm = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True)
    assert warm.stdout.splitlines()[-1] == "[]"


def test_a_cached_regular_expression_is_its_text_and_compiles_on_first_use() -> None:
    """Unpickling the catalog must not re-compile every policy's pattern (it did: ~0.1 s a start)."""
    import pickle

    from scanner.rules.spec import Regex, compile_regex

    original = compile_regex(r"gemnasium-python:2-python-3\.9\b")
    assert original.search("image: gemnasium-python:2-python-3.9")
    restored = pickle.loads(pickle.dumps(original))
    assert restored == original and hash(restored) == hash(original)
    assert restored._compiled is None  # only the text travelled
    text = "a gemnasium-python:2-python-3.9 b"
    assert [text[start:end] for start, end, _, _ in restored.finditer(text)] == ["gemnasium-python:2-python-3.9"]
    assert restored._compiled is not None
    assert Regex("a") != Regex("b")
    with pytest.raises(ValueError, match="is not RE2 syntax"):
        compile_regex("(")
