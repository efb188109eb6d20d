"""The compiled catalog, cached on disk by content hash, so `sunset scan` starts without parsing,
validating and compiling every policy file again.

The key is a hash of sunset's version, Python's version, the code a compiled catalog is made of
(the size and modification time of every module of `scanner/rules` and `scanner/readers`: the
matchers and the reader records they hold) and every policy file's path and bytes: any edit, added
or removed file gives another key, so a changed matcher never meets a catalog its old code compiled.
The cache lives in `$SUNSET_CACHE_DIR`, else `$XDG_CACHE_HOME/sunset`, else `~/.cache/sunset`
(`SUNSET_CACHE_DIR=off` turns it off). It is a pickle, as trusted as the user's own `__pycache__`: a
file that cannot be read back — truncated, from another version, not a catalog — is a miss, the
catalog is built again and the file replaced. A cache that cannot be written costs only speed.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
import tempfile
from pathlib import Path

from scanner import __version__
from scanner.rules.policy import Policy

_CODE = ("rules", "readers")  # folders of `scanner/` whose code the compiled catalog depends on
KEEP = 8  # catalogs kept: the newest, so edited policy folders do not fill the cache


def cache_dir() -> Path | None:
    configured = os.environ.get("SUNSET_CACHE_DIR")
    if configured == "off":
        return None
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "sunset"


def catalog_key(files: list[tuple[Path, bytes]]) -> str:
    digest = hashlib.sha256(f"{__version__}\0{sys.version}\0".encode())
    package = Path(__file__).resolve().parents[1]
    for folder in _CODE:
        for name, size, mtime in _modules(package / folder):
            digest.update(f"{name}\0{size}\0{mtime}\0".encode())
    for path, data in files:
        digest.update(f"{path}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()[:40]


def _modules(folder: Path) -> list[tuple[str, int, int]]:
    found = []
    for entry in os.scandir(folder):
        if entry.is_dir():
            found += _modules(Path(entry.path))
        elif entry.name.endswith(".py"):
            stat = entry.stat()
            found.append((entry.path, stat.st_size, stat.st_mtime_ns))
    return sorted(found)


# The catalog last read in this process, by the cache file it came from and that file's identity: a
# process that scans many times (an instance worker, the tests) unpickles it once, and a cache file
# replaced, truncated or removed since is read again, as a new process would.
_LAST: dict[str, tuple[tuple[int, int, int], list[Policy]]] = {}


def read(key: str) -> list[Policy] | None:
    folder = cache_dir()
    if folder is None:
        return None
    path = folder / f"catalog-{key}.pickle"
    try:
        with open(path, "rb") as handle:
            stat = os.fstat(handle.fileno())
            identity = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
            last = _LAST.get(str(path))
            if last is not None and last[0] == identity:
                return list(last[1])
            found = pickle.load(handle)
    except Exception:  # noqa: BLE001 - any unreadable cache is a miss; the catalog is built again
        return None
    if isinstance(found, list) and all(isinstance(p, Policy) for p in found):
        _LAST.clear()
        _LAST[str(path)] = (identity, found)
        return list(found)
    return None


def write(key: str, policies: list[Policy]) -> None:
    folder = cache_dir()
    if folder is None:
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".catalog-", delete=False) as handle:
            pickle.dump(policies, handle, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(handle.name, folder / f"catalog-{key}.pickle")
        _prune(folder)
    except OSError:
        return  # a read-only or full cache folder only costs speed


def _prune(folder: Path) -> None:
    found = sorted(folder.glob("catalog-*.pickle"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in found[KEEP:]:
        old.unlink(missing_ok=True)
