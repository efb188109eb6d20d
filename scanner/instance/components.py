"""CI/CD component addresses as GitLab resolves them (`lib/gitlab/ci/components/instance_path.rb`,
`app/models/ci/catalog/components_project.rb`), without the API calls (`scanner.instance.walk` makes them).

An address is `host/group/project/name@version`, `$CI_SERVER_FQDN` or `$CI_SERVER_HOST` standing for
this instance's host; the project is everything up to the last `/`. The version is looked up in
GitLab's order: the catalog version (`~latest` the newest; `1` or `1.2` the newest of that major or
minor; another name exactly), then a released tag, then any ref of that name — tag, branch or commit
SHA. The REST API shows a catalog's versions as the project's releases whose tag is a semantic
version, so that is what is ranked here. The component's file is `templates/<name>.yml`, else
`templates/<name>/template.yml`, at that ref.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SERVER_VARS = ("$CI_SERVER_FQDN", "${CI_SERVER_FQDN}", "$CI_SERVER_HOST", "${CI_SERVER_HOST}")
LATEST = "~latest"
_SHORT_SEMVER = re.compile(r"\d+(\.\d+)?")
_SEMVER = re.compile(r"v?(\d+)\.(\d+)\.(\d+)")


@dataclass(frozen=True, slots=True)
class Address:
    host: str
    project: str
    name: str
    version: str

    def files(self) -> tuple[str, str]:
        """The component's file, in the order GitLab tries them."""
        return f"templates/{self.name}.yml", f"templates/{self.name}/template.yml"


def parse(target: str, host: str) -> Address | None:
    """The address of `component: target`, or None when it is not `host/group/project/name@version`."""
    address, _, version = target.partition("@")
    for var in SERVER_VARS:
        if address.startswith(var + "/"):
            address = host + address[len(var):]
    where, _, path = address.partition("/")
    project, _, name = path.rpartition("/")
    if not where or not project or not name or not version or project.startswith("/"):
        return None
    return Address(where, project, name, version)


def needs_catalog(version: str) -> bool:
    """Whether the version is looked up among the catalog's versions first (`~latest`, `1`, `1.2`)."""
    return version == LATEST or _SHORT_SEMVER.fullmatch(version) is not None


def catalog_version(tags: list[str], version: str) -> str | None:
    """The newest released tag (a semantic version) that `~latest`, `1` or `1.2` selects, if any."""
    prefix = () if version == LATEST else tuple(int(p) for p in version.split("."))
    ranked = [(v, t) for t in tags if (m := _SEMVER.fullmatch(t)) and
              (v := tuple(int(g) for g in m.groups()))[: len(prefix)] == prefix]
    return max(ranked)[1] if ranked else None
