"""How settings files are recognised while walking a directory: by name first, then, only for
names that are ambiguous, by a look at the text — all of it, so a long comment header never hides
what follows (a byte-order mark is read past). Nothing is parsed here.

A template's name is read under its template suffix (`.j2`, `.jinja2`, `.tpl`, `.tmpl`, `.gotmpl`,
`.erb`): `docker-compose.yml.j2` is a compose file, `values.yaml.gotmpl` Helm values. A template
with no other extension (Terraform's `runner-config.tpl`) is a runner's `config.toml` when its
text is one: a `[[runners]]` table, and TOML (`key = value`) as its first statement. A template whose
plain name is a shell script's (`user-data.sh.tpl`, `install.sh.j2`) is one; a template with no other
extension is a shell script when it opens with a shell's shebang or its first statement (past blank
lines, comments and lines of template tags alone) is a shell command (`mkdir -p …`, `gitlab-runner
register`, `export X=1`), and it is not a runner's `config.toml`: Terraform's user-data templates.

A name alone decides for Dockerfiles, env files, compose files and Helm values files; values of
GitLab's charts under another name (a helmfile's `gitlab.yaml`) are known by keys only those charts
take at the top: `gitlabUrl:`, `runnerRegistrationToken:`, `certmanager-issuer:`, a `global:` with
`hosts:`/`appConfig:` beside a subchart's section (`certmanager:`, `gitlab-runner:`, `registry:`, …),
or a `gitlab-runner:` section with `gitlabUrl:`/`runners:`. A
`gitlab.rb`, `gitlab.yml` or `config.toml` must also look like one (a settings assignment, a
`gitlab:` section, a `[[runners]]` table), because those names are used by other software too.
A `database.yml` is only GitLab's when something says so: a `gitlab.yml` beside it, `gitlab` in
its path, or in its first lines. Kubernetes manifests are YAML files opening with `apiVersion:`
and `kind:` (Helm chart templates, which are Go templates, are left alone). Security policy files
(`.gitlab/security-policies/*.yml`, a policy project's) and agent configuration files
(`.gitlab/agents/<name>/config.yaml`) are recognised by where GitLab reads them.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from scanner.core.lines import lf_line_ends

# Past this a file is not looked at: no --max-file-size that makes sense reads it.
RECOGNITION_LIMIT = 64 * 1024 * 1024
_TEMPLATE_SUFFIX = re.compile(r"\.(?:j2|jinja2?|tpl|tmpl|gotmpl|erb)$")
# A template's first line that is not blank, a comment or a template tag; and whether it starts TOML.
_SIGNIFICANT = re.compile(r"(?m)^(?![ \t]*(?:#|$|\{[{%#]|<%|%\{))[ \t]*\S[^\n]*")
_TOML_START = re.compile(r"[ \t]*(?:\[|[\w\"'.-]+[ \t]*=)")

# A line of template tags alone: `${pre_install}`, `%{ if x ~}`, `{{ extra }}`, `<% end %>`.
_TAGS_ONLY = re.compile(r"[ \t]*(?:(?:\$\{[^{}\n]*\}|%\{[^{}\n]*\}|\{\{.*?\}\}|\{%.*?%\}|<%.*?%>)[ \t]*)+$")
_SHEBANG_SHELL = re.compile(r"#![ \t]*\S*/(?:env[ \t]+)?(?:ba|z|da|k|a)?sh\b")
# The first words of a shell script as Terraform user-data and bootstrap templates open.
_SHELL_START = re.compile(
    r"[ \t]*(?:(?:set|export|mkdir|cat|echo|printf|curl|wget|yum|dnf|apt-get|apt|apk|zypper|cd|cp|mv|rm|chmod"
    r"|chown|sudo|systemctl|service|usermod|useradd|tee|sed|source|exec|sleep|touch|ln|install|pip3?|sh|bash"
    r"|gitlab-runner|docker|if|for|while|case|until|function|readonly|declare|local|trap|umask)(?:[ \t]|$)"
    r"|[A-Za-z_][A-Za-z0-9_]*=[^ =]|[A-Za-z_][A-Za-z0-9_-]*[ \t]*\(\)[ \t]*\{?)")
_RB_SETTING = re.compile(r"(?m)^[ \t]*(?:[a-z_]+\[['\":][a-z_]+['\"]?\]|external_url[ (]|git_data_dirs[ (])")
_RB_CODE = re.compile(r"(?m)^[ \t]*(?:module|class)[ \t]+[A-Z]")
_GITLAB_YML = re.compile(r"(?m)^production:|^[ \t]+gitlab:[ \t]*$")
_PRODUCTION = re.compile(r"(?m)^production:")
_RUNNER_TOML = re.compile(r"(?m)^[ \t]*\[\[?runners[\].]")
_REGISTRY = (re.compile(r"(?m)^storage:"), re.compile(r"(?m)^(?:version|http|notifications|auth):"))
_MANIFEST = (re.compile(r"(?m)^apiVersion:[ \t]*\S"), re.compile(r"(?m)^kind:[ \t]*\S"))
_PROM_GROUPS = re.compile(r"(?m)^groups:[ \t]*$")
_PROM_RULE = re.compile(r"(?m)^[ \t-]*(?:alert|record):[ \t]*\S")
_VALUES = re.compile(r"^(?:[\w.-]*[._-])?values(?:[._-][\w.-]*)?\.ya?ml$", re.I)
_COMPOSE = re.compile(r"^(?:docker-)?compose(?:[._-][\w.-]*)?\.ya?ml$", re.I)
_TEMPLATE_EXT = r"(?:\.(?:example|sample|template|tmpl|tpl|erb|j2|jinja2?|dist|orig|default))?"
_RB_NAME = re.compile(rf"^gitlab\.rb{_TEMPLATE_EXT}$")
_YML_NAME = re.compile(rf"^gitlab\.ya?ml{_TEMPLATE_EXT}$")
_DB_NAME = re.compile(rf"^database\.ya?ml(?:\.postgresql)?{_TEMPLATE_EXT}$")
_TOML_NAME = re.compile(rf"^[\w.-]*\.toml{_TEMPLATE_EXT}$")
_REGISTRY_NAME = re.compile(rf"^(?:config|registry)[\w.-]*\.ya?ml{_TEMPLATE_EXT}$")


def head(path: Path, size: int = RECOGNITION_LIMIT) -> str:
    """The file's text (up to `size` bytes), without a leading byte-order mark, a lone CR read as LF
    (`scanner.core.lines`: line-anchored patterns see its lines); "" if unreadable."""
    try:
        stat = path.stat()
    except OSError:
        return ""
    return _text(str(path), stat.st_mtime_ns, stat.st_size, size)


@lru_cache(maxsize=4)  # the recognisers of one file read it once
def _text(path: str, mtime: int, length: int, size: int) -> str:
    try:
        with open(path, "rb") as fh:
            return lf_line_ends(fh.read(size).decode("utf-8", "replace").removeprefix("\ufeff"))
    except OSError:
        return ""


def plain_name(path: Path) -> str:
    """The name under a template suffix: `values.yaml` for `values.yaml.j2`."""
    return _TEMPLATE_SUFFIX.sub("", path.name)


_POLICY_TYPES = re.compile(r"(?m)^(?:scan_execution_policy|approval_policy|scan_result_policy|pipeline_execution_policy"
                           r"|vulnerability_management_policy|pipeline_execution_schedule_policy):")


def is_security_policy(path: Path) -> bool:
    """A security policy project's `.gitlab/security-policies/policy.yml` (any `.yml` there)."""
    if path.suffix not in (".yml", ".yaml") or path.parent.name != "security-policies":
        return False
    return path.parent.parent.name == ".gitlab" or bool(_POLICY_TYPES.search(head(path)))


def is_agent_config(path: Path) -> bool:
    """`.gitlab/agents/<agent name>/config.yaml`, where GitLab reads an agent's configuration."""
    return path.name == "config.yaml" and len(path.parts) >= 4 and path.parts[-3:-2] == ("agents",) \
        and path.parts[-4] == ".gitlab"


def is_auto_deploy_values(path: Path) -> bool:
    """`.gitlab/auto-deploy-values.yaml`, the values Auto DevOps passes to its Auto Deploy chart."""
    return path.name == "auto-deploy-values.yaml" and path.parent.name == ".gitlab"


def is_gitlab_rb(path: Path) -> bool:
    name = path.name
    if not (_RB_NAME.match(name) or (name.endswith(".rb") and "gitlab" in name.lower())):
        return False
    text = head(path)
    return bool(_RB_SETTING.search(text)) and not _RB_CODE.search(text)


def is_gitlab_yml(path: Path) -> bool:
    """A `gitlab.yml`: its `production:` section, or a `gitlab:` section and not the values of GitLab's
    chart (a `global:` section and subcharts), which a helmfile may name `gitlab.yaml` too."""
    if not _YML_NAME.match(path.name):
        return False
    text = head(path)
    if not _GITLAB_YML.search(text):
        return False
    return bool(_PRODUCTION.search(text)) or not all(rx.search(text) for rx in _CHART_GLOBAL)


def is_database_yml(path: Path) -> bool:
    if not _DB_NAME.match(path.name):
        return False
    if any("gitlab" in part.lower() for part in path.parent.parts[-4:]):
        return True
    if any(_YML_NAME.match(p.name) for p in _siblings(path)):
        return True
    return "gitlab" in head(path).lower()


def _siblings(path: Path) -> list[Path]:
    try:
        return [p for p in path.parent.iterdir() if p.name.startswith("gitlab.")]
    except OSError:
        return []


def is_runner_config(path: Path) -> bool:
    name, plain = path.name, plain_name(path)
    if _TOML_NAME.match(name):
        return bool(_RUNNER_TOML.search(head(path)))
    if plain == name or "." in plain:  # only a template with no other extension is looked into
        return False
    text = head(path)
    first = _SIGNIFICANT.search(text)
    return bool(_RUNNER_TOML.search(text)) and first is not None and bool(_TOML_START.match(first.group()))


def is_shell_template(path: Path) -> bool:
    """A template of a shell script: by its plain name (`*.sh.tpl`), or, with no other extension, by
    its shebang or first statement (and no `[[runners]]` TOML)."""
    name, plain = path.name, plain_name(path)
    if plain == name:
        return False
    if plain.endswith((".sh", ".bash")):
        return True
    if "." in plain:
        return False
    text = head(path, 1024 * 1024)
    if _SHEBANG_SHELL.match(text):
        return True
    for line in text.split("\n", 200)[:200]:
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or _TAGS_ONLY.match(line):
            continue
        return bool(_SHELL_START.match(line)) and not (_RUNNER_TOML.search(text) and _TOML_START.match(line))
    return False


def is_registry_config(path: Path) -> bool:
    if not (_REGISTRY_NAME.match(path.name) or (path.suffix in (".yml", ".yaml") and "registry" in path.parent.name)):
        return False
    text = head(path)
    return all(rx.search(text) for rx in _REGISTRY)


# Values of GitLab's charts under another name than `values.yaml` (a helmfile's `gitlab.yaml`): keys
# only the GitLab or GitLab Runner chart takes, at the top.
_CHART_ONLY = re.compile(r"(?m)^(?:gitlabUrl|runnerRegistrationToken|runnerToken|certmanager-issuer)[ \t]*:")
_CHART_GLOBAL = (re.compile(r"(?m)^global:[ \t]*$"), re.compile(r"(?m)^[ \t]+(?:hosts|appConfig|gitlab):[ \t]*$"),
                 re.compile(r"(?m)^(?:gitlab|certmanager|nginx-ingress|gitlab-runner|registry|shared-secrets"
                            r"|upgradeCheck|minio|postgresql|redis):[ \t]*$"))
_UMBRELLA = (re.compile(r"(?m)^gitlab-runner:[ \t]*$"), re.compile(r"(?m)^[ \t]+(?:gitlabUrl|runners):"))


def is_helm_values(path: Path) -> bool:
    """`values.yaml` and the like by name; a YAML file of another name by keys of GitLab's charts (and
    no `apiVersion:`, which a manifest or a chart's own `Chart.yaml` has)."""
    plain = plain_name(path)
    if _VALUES.match(plain):
        return True
    if not plain.endswith((".yml", ".yaml")) or plain in ("Chart.yaml", "helmfile.yaml"):
        return False
    text = head(path)
    if _MANIFEST[0].search(text):
        return False
    return bool(_CHART_ONLY.search(text)) or all(rx.search(text) for rx in _CHART_GLOBAL) or all(
        rx.search(text) for rx in _UMBRELLA)


def is_compose(path: Path) -> bool:
    return bool(_COMPOSE.match(plain_name(path)))


def is_dockerfile(path: Path) -> bool:
    name = path.name
    base = name.split(".", 1)[0]
    return base in ("Dockerfile", "Containerfile") or name.lower().endswith(".dockerfile")


def is_java_properties(path: Path) -> bool:
    """The build tool files Dependency Scanning reads versions from: sbt's `project/build.properties`,
    Maven's `.mvn/wrapper/maven-wrapper.properties`."""
    parents = path.parts[-3:-1]
    return (path.name == "build.properties" and parents[-1:] == ("project",)) or (
        path.name == "maven-wrapper.properties" and parents == (".mvn", "wrapper"))


def is_text_file(path: Path) -> bool:
    """Files sunset reads only as text, for what GitLab's record names in them: a .NET project
    (`*.csproj`), Godep's `Godeps/Godeps.json`, an HTML page (a review app's toolbar script), the
    Static Site Editor's `.gitlab/static-site-editor.yml`."""
    return path.suffix in (".csproj", ".html", ".htm") or (
        path.name == "Godeps.json" and path.parent.name == "Godeps") or (
        path.name == "static-site-editor.yml" and path.parent.name == ".gitlab")


def is_prometheus_rules(path: Path) -> bool:
    """A Prometheus rule file: YAML with top-level `groups:` whose rules carry `expr:` (`alert:`/`record:`)."""
    if path.suffix not in (".yml", ".yaml"):
        return False
    text = head(path)
    return bool(_PROM_GROUPS.search(text)) and bool(_PROM_RULE.search(text))


def is_env_file(path: Path) -> bool:
    name = path.name
    return name == ".env" or name.startswith(".env.") or (name.endswith(".env") and len(name) > 4)


def is_k8s_manifest(path: Path) -> bool:
    if not plain_name(path).endswith((".yml", ".yaml")):
        return False
    text = head(path)
    if not all(rx.search(text) for rx in _MANIFEST):
        return False
    return not ("templates" in path.parent.parts and "{{" in text)


def named_kind(path: Path) -> str | None:
    """For a file the user named: the settings kind its name alone says, without the look inside that
    walking needs (`database.yml` is a database config wherever it lies)."""
    name = path.name
    if _RB_NAME.match(name):
        return "omnibus-config"
    if _YML_NAME.match(name):
        return "gitlab-yml"
    if _DB_NAME.match(name):
        return "database-yml"
    if re.match(rf"^config\.toml{_TEMPLATE_EXT}$", name):
        return "runner-config"
    return None
