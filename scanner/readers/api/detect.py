"""Which source files the API kinds claim: by suffix alone (never imports the parsers)."""

from __future__ import annotations

from pathlib import Path

PY_SUFFIXES = (".py",)
GRAPHQL_SUFFIXES = (".graphql", ".gql")
JS_SUFFIXES = (".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx")
TF_SUFFIXES = (".tf",)
RUBY_SUFFIXES = (".rb", ".rake")


def _not_empty(path: Path) -> bool:
    """An empty source file (`__init__.py`) is normal, not an input error: leave it alone."""
    try:
        return path.stat().st_size > 0
    except OSError:
        return True  # the read reports the problem


def is_python(path: Path) -> bool:
    return path.suffix in PY_SUFFIXES and _not_empty(path)


def is_graphql(path: Path) -> bool:
    return path.suffix in GRAPHQL_SUFFIXES and _not_empty(path)


def is_js(path: Path) -> bool:
    return path.suffix in JS_SUFFIXES and not path.name.endswith((".min.js", ".d.ts")) and _not_empty(path)


def is_terraform(path: Path) -> bool:
    return path.suffix in TF_SUFFIXES and _not_empty(path)


def is_ruby(path: Path) -> bool:
    """Ruby scripts; a `gitlab.rb` is claimed before this by the Omnibus settings kind."""
    return path.suffix in RUBY_SUFFIXES and _not_empty(path)
