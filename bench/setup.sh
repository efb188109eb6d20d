#!/usr/bin/env bash
# Create bench/.venv-checkov: checkov in its own virtualenv, so its pinned dependencies
# never touch sunset's environment. Safe to re-run. Override with PYTHON=... CHECKOV_VERSION=...
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$here/.venv-checkov"
python="${PYTHON:-python3.11}"
version="${CHECKOV_VERSION:-3.3.30}"

command -v "$python" >/dev/null 2>&1 || python=python3
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet "checkov==$version"
echo "checkov $(BC_SKIP_MAPPING=TRUE "$venv/bin/checkov" --version) installed in $venv"
