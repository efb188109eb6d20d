"""Which kind a file is. What the user said first (`kinds:` in `.sunset.yml`, globs from the scanned
folder), then a pipeline root by its name (`scanner.core.files.is_pipeline_root`), then each kind's
recognition (`scanner.rules.documents`). A file named on the command line is also taken for what its
name alone says (a `database.yml` is a database config), and a YAML file holding jobs or `include:`
is a pipeline root; a named file that fits no kind is reported as not recognised, never counted as
scanned.

A walked YAML file no other kind claims is a pipeline file when its content is one as GitLab reads it
(`is_ci_library`): a CI template library's files (`templates/Dependency.yml`, `ci/build.yml`), which
other projects include by `include: project:`/`file:` and which are not pipeline roots by name.
"""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from scanner.core.files import is_pipeline_root, read_text
from scanner.core.tree import ParseError
from scanner.engine.globs import Glob
from scanner.readers.ci import GLOBAL_KEYWORDS
from scanner.readers.settings.detect import head, named_kind
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

    def walked(self, path: Path, rel: str, by_content: bool = True) -> DocumentKind | None:
        """A file found by walking a folder: its kind, or None to leave it alone. `by_content=False`:
        without the look at a YAML file's content that makes it a pipeline file (whoever asks takes
        None and a pipeline file alike)."""
        for pattern, kind in self.kinds:
            if pattern.match(rel):
                return kind
        if is_pipeline_root(path):
            return PIPELINE
        claimed = claiming_kind(path)
        return claimed if claimed is not None or not by_content or not is_ci_library(path) else PIPELINE

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


# GitLab's job keywords (`Gitlab::Ci::Config::Entry::Job`, `Processable`, `Bridge` and their EE
# additions): a job holding any other key is refused by GitLab, so a mapping of these is a job.
JOB_KEYWORDS = frozenset({
    "after_script", "allow_failure", "artifacts", "before_script", "cache", "coverage", "dast_configuration",
    "dependencies", "environment", "except", "extends", "hooks", "id_tokens", "identity", "image", "inherit",
    "inputs", "interruptible", "manual_confirmation", "needs", "only", "pages", "parallel", "publish", "release",
    "resource_group", "retry", "rules", "run", "script", "secrets", "services", "stage", "start_in", "tags",
    "timeout", "trigger", "type", "variables", "when",
})
# What makes a mapping of job keywords a job rather than a bag of settings that happen to share names.
_JOB_CORE = frozenset({"script", "trigger", "extends", "run"})
_INCLUDE_KEYS = frozenset({"local", "project", "file", "ref", "template", "remote", "component", "inputs", "rules",
                           "integrity", "artifact", "job", "cache"})
_IMAGE_KEYS = frozenset({"name", "entrypoint", "pull_policy", "docker", "kubernetes"})
_SPEC_KEYS = frozenset({"inputs", "include", "component"})
# A line a CI file cannot do without: a job's core keyword indented under it, or a top-level
# `include:`/`stages:`/`workflow:`. Files without one are not parsed.
_CI_SIGNAL = re.compile(r"(?m)^(?:[ \t]+(?:script|trigger|extends|run)[ \t]*:|(?:include|stages|workflow)[ \t]*:)")


def is_ci_library(path: Path) -> bool:
    """A YAML file whose content is GitLab CI/CD configuration as GitLab validates it (`looks_like_ci`)."""
    if not path.name.endswith((".yml", ".yaml")):
        return False
    text = head(path)
    if not _CI_SIGNAL.search(text):
        return False
    try:
        roots = load_yaml(text).roots
    except ParseError:
        return False
    return looks_like_ci(roots)


def looks_like_ci(roots: list[object]) -> bool:
    """Every top-level key is a global keyword holding what GitLab takes there, a hidden key (`.name`,
    anything) or a job (a mapping of job keywords only), and something only CI has is there: a job
    with `script:`/`trigger:`/`extends:`/`run:`, a valid `include:`, `stages:` or `workflow:`. A first
    document that is only a `spec:` header (a component's, or a template with inputs) is allowed.
    Kubernetes manifests, compose files, Ansible, Helm values and other CI systems' files fail it:
    a scalar at the top, a list root, a `services:` mapping, keys GitLab does not know."""
    docs = [r for r in roots if r is not None]
    if docs and _is_spec_header(docs[0]):
        docs = docs[1:]
    if len(docs) != 1 or not isinstance(docs[0], dict) or not docs[0]:
        return False
    evidence = False
    for key, value in docs[0].items():
        if not isinstance(key, str):
            return False
        if key.startswith("."):
            evidence = evidence or (_is_job(value) and bool(_JOB_CORE & value.keys()))
            continue
        if key in GLOBAL_KEYWORDS and key != "spec":
            if not _global_fits(key, value):
                return False
            evidence = evidence or key in ("include", "stages", "workflow")
            continue
        if not _is_job(value):
            return False
        evidence = evidence or bool(_JOB_CORE & value.keys())
    return evidence


def _is_spec_header(root: object) -> bool:
    if not isinstance(root, dict) or set(root) != {"spec"}:
        return False
    spec = root["spec"]
    return isinstance(spec, dict) and bool(spec) and set(spec) <= _SPEC_KEYS


def _is_job(value: object) -> bool:
    return isinstance(value, dict) and bool(value) and all(isinstance(k, str) and k in JOB_KEYWORDS for k in value)


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _global_fits(key: str, value: object) -> bool:
    """What GitLab accepts under a global keyword (the shapes, not every detail)."""
    if key == "include":
        items = value if isinstance(value, list) else [value]
        return bool(items) and all(_include_item(i) for i in items)
    if key in ("stages", "types"):
        return _strings(value)
    if key == "image":
        return isinstance(value, str) or (isinstance(value, dict) and set(value) <= _IMAGE_KEYS and "name" in value)
    if key == "services":
        return isinstance(value, list)
    if key in ("before_script", "after_script"):
        return isinstance(value, (str, list))
    if key == "cache":
        return isinstance(value, (dict, list))
    if key == "default":
        return _is_job(value) or value == {}
    if key == "workflow":
        return isinstance(value, dict) and set(value) <= {"name", "rules", "auto_cancel"}
    return isinstance(value, dict)  # variables


def _include_item(item: object) -> bool:
    if isinstance(item, str):
        return item.endswith((".yml", ".yaml")) or "$" in item
    return isinstance(item, dict) and bool(item) and set(item) <= _INCLUDE_KEYS
