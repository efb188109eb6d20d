"""Which kind a file is. What the user said first (`kinds:` in `.sunset.yml`, globs from the scanned
folder), then a pipeline root by its name (`scanner.core.files.is_pipeline_root`), then each kind's
recognition (`scanner.rules.documents`). A file named on the command line is also taken for what its
name alone says (a `database.yml` is a database config), and a YAML file holding jobs or `include:`
is a pipeline root; a named file that fits no kind is reported as not recognised, never counted as
scanned.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from scanner.core.files import is_pipeline_root, read_text
from scanner.core.tree import ParseError
from scanner.engine.globs import Glob
from scanner.readers.settings.detect import named_kind
from scanner.readers.yamldoc import load_yaml
from scanner.rules.documents import KINDS, DocumentKind, claiming_kind

PIPELINE = KINDS["gitlab-ci"]
# Top-level keys only a pipeline has, and keys that make a mapping a job.
_PIPELINE_KEYS = frozenset({"include", "stages", "workflow", "default"})
_JOB_KEYS = frozenset({"script", "trigger", "extends", "stage", "needs", "run"})


@dataclass(frozen=True, slots=True)
class Recognition:
    kinds: tuple[tuple[Glob, DocumentKind], ...] = ()  # the user's globs, in the file's order

    @classmethod
    def of(cls, kinds: dict[str, str]) -> Recognition:
        return cls(tuple((Glob(glob), KINDS[name]) for glob, name in kinds.items()))

    def walked(self, path: Path, rel: str) -> DocumentKind | None:
        """A file found by walking a folder: its kind, or None to leave it alone."""
        for pattern, kind in self.kinds:
            if pattern.match(rel):
                return kind
        return PIPELINE if is_pipeline_root(path) else claiming_kind(path)

    def named(self, path: Path, rel: str, max_bytes: int) -> DocumentKind | None:
        """A file named on the command line: its kind, or None when none fits."""
        kind = self.walked(path, rel)
        if kind is not None:
            return kind
        name = named_kind(path)
        if name is not None:
            return KINDS[name]
        return PIPELINE if path.suffix in (".yml", ".yaml") and _pipeline_like(path, max_bytes) else None

    def of_text(self, path: Path, rel: str, text: str, max_bytes: int) -> DocumentKind | None:
        """Text not on disk (`sunset scan -`) named `path`: its kind as if the file lay there. The
        recognisers look at a file's first lines, so the text is put in a private temporary folder
        under the same last three path parts (`templates/x/template.yml`, `.gitlab/security-policies/…`)."""
        for pattern, kind in self.kinds:
            if pattern.match(rel):
                return kind
        with tempfile.TemporaryDirectory(prefix="sunset-stdin-") as folder:
            stand_in = Path(folder, *[p for p in path.parts[1:][-3:] if p not in ("..", os.sep)])
            stand_in.parent.mkdir(parents=True, exist_ok=True)
            stand_in.write_text(text, encoding="utf-8")
            return Recognition().named(stand_in, rel, max_bytes)


def _pipeline_like(path: Path, max_bytes: int) -> bool:
    """YAML whose top level has a pipeline keyword or a job. YAML that does not parse counts, so that
    its error is reported where it is."""
    real = path.resolve()
    text = read_text(real, real.parent, max_bytes)
    if not isinstance(text, str):
        return True  # unreadable: the read problem is reported when it is loaded
    try:
        roots = load_yaml(text).roots
    except ParseError:
        return True
    for root in roots:
        if isinstance(root, dict) and any(
            k in _PIPELINE_KEYS or (isinstance(v, dict) and _JOB_KEYS & v.keys()) for k, v in root.items()
        ):
            return True
    return False
