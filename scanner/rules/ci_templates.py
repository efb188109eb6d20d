"""GitLab's CI/CD template names, and `include: template: NAME` resolved as GitLab resolves it — the one
place that does it, for the `template-include` and `template-unknown` matchers and the instance scan.

GitLab (`lib/gitlab/ci/config/external/file/template.rb`, `lib/gitlab/template/gitlab_ci_yml_template.rb`,
`lib/gitlab/template/finders/global_template_finder.rb` and Enterprise Edition's
`ee/lib/ee/gitlab/template/gitlab_ci_yml_template.rb`): NAME must end in `.gitlab-ci.yml`, or the include
is "not a valid location"; the finder then looks for the file under `lib/gitlab/ci/templates/` itself,
then in the category folders `Pages/`, `Verify/`, `autodeploy/` and `Security/`, first found wins. The
Free edition adds `Security/` only for `SAST.gitlab-ci.yml`; Enterprise Edition, which GitLab.com runs,
for every name, and sunset follows it (`DAST.gitlab-ci.yml`, written in GitLab's docs for years, is
`Security/DAST.gitlab-ci.yml`). The file system is case-sensitive, so `security/sast.gitlab-ci.yml`
finds nothing; a name that climbs out of the folder (`../`) is refused. `Jobs/` and the other
folders are not categories: `Build.gitlab-ci.yml` is not `Jobs/Build.gitlab-ci.yml`.

The names come from `policies/ci/ci-template-names.yml`: every template GitLab has shipped, with what
is known of each one's removal, so a name resolves to the template it meant when it was written.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

SUFFIX = ".gitlab-ci.yml"
CATEGORIES = ("", "Pages/", "Verify/", "autodeploy/", "Security/")
DATA = Path(__file__).resolve().parents[1] / "policies" / "ci" / "ci-template-names.yml"
_STEM = re.compile(r"(?:\.gitlab-ci)?\.ya?ml$")


@dataclass(frozen=True, slots=True)
class Template:
    name: str
    removed_in: str | None = None
    policy: str | None = None
    added: str | None = None


def _template(raw: Any) -> Template:
    if isinstance(raw, str):
        return Template(raw)
    return Template(str(raw["name"]), raw.get("removed_in"), raw.get("policy"), raw.get("added"))


@cache
def known(path: Path = DATA) -> dict[str, Template]:
    """Every template name GitLab has shipped, by name (read once, at the first template include)."""
    from ruamel.yaml import YAML

    data = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
    return {t.name: t for t in map(_template, data["templates"])}


def resolve(name: str, templates: dict[str, Template] | None = None) -> Template | None:
    """The template GitLab reads for `include: template: name`, or None when it finds none."""
    if not name.endswith(SUFFIX) or "$" in name:
        return None
    if ".." in name.split("/"):  # GitLab refuses a path traversal
        return None
    found = known() if templates is None else templates
    for category in CATEGORIES:
        if (template := found.get(category + name)) is not None:
            return template
    return None


def canonical(name: str, templates: dict[str, Template] | None = None) -> str:
    """The path under GitLab's template folder that `name` reads; the name itself when none fits."""
    template = resolve(name, templates)
    return name if template is None else template.name


def suggestions(name: str, templates: dict[str, Template]) -> list[str]:
    """Known names close to `name` (a typo, a wrong folder or case, a missing or wrong suffix)."""
    current = {_STEM.sub("", t.name): t.name for t in templates.values() if t.removed_in is None}
    stem = _STEM.sub("", name)
    base = stem.rsplit("/", 1)[-1].lower()
    same_base = [n for s, n in current.items() if s.rsplit("/", 1)[-1].lower() == base]
    close = [current[s] for s in difflib.get_close_matches(stem, list(current), n=3, cutoff=0.8)]
    return (same_base or close)[:3]


def include_note(name: str) -> str:
    """What an include record says of a template: the file GitLab reads when it is not the name as
    written, that no template has the name, or nothing."""
    if "$" in name:
        return "path uses CI/CD variables; not resolved"
    template = resolve(name)
    if template is None:
        return "no CI/CD template of that name"
    return f"GitLab reads `{template.name}`" if template.name != name else ""
