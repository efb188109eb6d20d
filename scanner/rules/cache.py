"""The compiled catalog, cached on disk by content hash, so `sunset scan` starts without parsing,
validating and compiling every policy file again.

The key is a hash of sunset's version, Python's version and every policy file's path and bytes:
any edit, added or removed file gives another key. The cache lives in `$SUNSET_CACHE_DIR`, else
`$XDG_CACHE_HOME/sunset`, else `~/.cache/sunset` (`SUNSET_CACHE_DIR=off` turns it off). It is a
pickle, as trusted as the user's own `__pycache__`: a file that cannot be read back — truncated,
from another version, not a catalog — is a miss, the catalog is built again and the file
replaced. A cache that cannot be written costs only speed.
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

# 2: required-keys where/skip/unless (issue 12); 3: fix hints; 4: required-keys extends; 5: jsonpath key;
# 6: template-include unless_set, if_set; 7: graphql values/variable_types, rest-api unless_parameter;
# 8: jsonpath within/condition, required-keys condition, text and unique-values kinds;
# 9: regular expressions pickled as their text (spec.Regex, compiled on first use)
_FORMAT = 9
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
    digest = hashlib.sha256(f"{_FORMAT}\0{__version__}\0{sys.version}\0".encode())
    for path, data in files:
        digest.update(f"{path}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()[:40]


def read(key: str) -> list[Policy] | None:
    folder = cache_dir()
    if folder is None:
        return None
    try:
        with open(folder / f"catalog-{key}.pickle", "rb") as handle:
            found = pickle.load(handle)
    except Exception:  # noqa: BLE001 - any unreadable cache is a miss; the catalog is built again
        return None
    if isinstance(found, list) and all(isinstance(p, Policy) for p in found):
        return found
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
