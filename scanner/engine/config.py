"""`.sunset.yml`: a repository's own choices, validated like a policy (unknown keys rejected).

    target: "18.0"            # release to upgrade to
    from: "16.11"             # release the instance runs today: changes in effect by then are info
    fail_on: warning          # error | warning | info | never
    policies:
      select: [terraform-templates]   # only these (default: all)
      ignore: [job-token-allowlist-enforcement]
    severity:                 # per-policy override
      workflow-rules-templates: info
    exclude: ["vendor/", "*.generated.yml"]   # gitignore patterns, from the file's folder
    baseline: .sunset-baseline.json
    ci_config_path: ci/main.yml   # the project's custom CI/CD configuration file (or a list)
    kinds:                        # files recognition cannot decide: glob -> document kind
      "deploy/*.yaml": helm-values

The file is `.sunset.yml`, or the `[tool.sunset]` table of a `pyproject.toml` (keys with `-` or `_`;
read as TOML, so `[tool.sunset.policies]` alone or dotted keys are the table too), found in the
working directory or its parents up to the repository root (the folder holding `.git`), else in the
scanned folder and its parents (`scanner.engine.discovery`); `--config FILE` names one. Command-line flags win over
the file. A broken file is `file:line: problem` and exit 2. `policies: select/ignore` take selectors
(`scanner.engine.select`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from scanner.core.files import ReadProblem, read_settings_text
from scanner.core.tree import ParseError
from scanner.engine import select as selectors
from scanner.engine.discovery import toml_key_lines
from scanner.readers.yamldoc import load_yaml
from scanner.rules.documents import check_kind_names
from scanner.rules.policy import Policy


class ConfigError(Exception):
    """A `.sunset.yml` that cannot be used; the message is `file:line: problem`."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PolicySelection(_Strict):
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()


class Config(_Strict):
    target: str | None = Field(default=None, pattern=r"^(0|[1-9]\d*)(\.(0|[1-9]\d*)(\.\d+)?)?$")  # 17, 17.10, 17.10.2
    from_: str | None = Field(default=None, alias="from", pattern=r"^(0|[1-9]\d*)(\.(0|[1-9]\d*)(\.\d+)?)?$")
    fail_on: Literal["error", "warning", "info", "never"] | None = None
    policies: PolicySelection = PolicySelection()
    severity: dict[str, Literal["error", "warning", "info"]] = {}
    exclude: tuple[str, ...] = ()  # gitignore patterns, matched from the configuration file's folder
    baseline: str | None = None
    # GitLab's "CI/CD configuration file" setting: a path in the repository, `path@group/project`
    # (another project's file) or a URL; one or a list.
    ci_config_path: tuple[str, ...] = ()
    kinds: dict[str, str] = {}  # glob (from the scanned folder) -> document kind

    @field_validator("ci_config_path", mode="before")
    @classmethod
    def _one_or_many(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value

    @field_validator("kinds")
    @classmethod
    def _known_kinds(cls, value: dict[str, str]) -> dict[str, str]:
        check_kind_names(value.values())
        return value

    @field_validator("target", "from_", mode="before")
    @classmethod
    def _release_text(cls, value: object) -> object:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


class LoadedConfig(NamedTuple):
    config: Config
    path: Path
    lines: dict[tuple[str | int, ...], int]

    def line_of(self, *route: str | int) -> int:
        for n in range(len(route), 0, -1):
            if route[:n] in self.lines:
                return self.lines[route[:n]]
        return 1


def load_config(path: Path) -> LoadedConfig:
    if path.name == "pyproject.toml":
        return _load_pyproject(path)
    text = read_settings_text(path)
    if isinstance(text, ReadProblem):
        raise ConfigError(f"{path}:{text.line or 1}: cannot read: {text.message.removesuffix('; not scanned')}")
    try:
        doc = load_yaml(text)
    except ParseError as exc:
        raise ConfigError(f"{path}:{exc.line or 1}: {exc.message}") from None
    root = doc.roots[0] if doc.roots else {}
    if not isinstance(root, dict):
        raise ConfigError(f"{path}:1: the configuration must be a mapping")
    lines = doc.key_lines(0) if doc.roots else {}
    return _validate(root, path, lines, ":")


def _load_pyproject(path: Path) -> LoadedConfig:
    import tomllib

    text = read_settings_text(path)
    if isinstance(text, ReadProblem):
        raise ConfigError(f"{path}:{text.line or 1}: cannot read: {text.message.removesuffix('; not scanned')}")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        at = re.search(r"\(at line (\d+), column \d+\)", str(exc))  # tomllib has no `lineno` before 3.14
        raise ConfigError(f"{path}:{getattr(exc, 'lineno', None) or (at and at.group(1)) or 1}: invalid TOML: "
                          f"{exc}") from None
    except (RecursionError, ValueError) as exc:  # nested too deeply; an integer of thousands of digits
        reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc).split(";")[0]
        raise ConfigError(f"{path}:1: cannot read: {reason}") from None
    table = data.get("tool", {}).get("sunset") if isinstance(data.get("tool"), dict) else None
    if not isinstance(table, dict):
        raise ConfigError(f"{path}:1: tool.sunset must be a table")
    positions = toml_key_lines(text, ("tool", "sunset"))
    root: dict[str, Any] = {}
    lines: dict[tuple[str | int, ...], int] = {}
    for key, value in table.items():
        name = key.replace("-", "_")
        root[name] = value
    for route, line in positions.items():
        lines.setdefault((route[0].replace("-", "_"), *route[1:]), line)
    return _validate(root, path, lines, "=")


def _raw_value(path: Path, lines: dict[tuple[str | int, ...], int], sep: str, key: str) -> str | None:
    """A release (`target`, `from`) as written on its line (`17.10`), to quote it back when it was read
    as a number."""
    line = lines.get((key,))
    if line is None:
        return None
    try:
        text = path.read_text(encoding="utf-8").splitlines()[line - 1]
    except (OSError, UnicodeDecodeError, IndexError):
        return None
    value = text.partition(sep)[2].split("#")[0].strip()
    return value or None


def _validate(root: dict[str, Any], path: Path, lines: dict[tuple[str | int, ...], int], sep: str) -> LoadedConfig:
    for key in ("target", "from"):
        if isinstance(root.get(key), float):  # `17.10` unquoted is the number 17.1: say so, never guess
            written = _raw_value(path, lines, sep, key) or str(root[key])
            line = lines.get((key,), 1)
            read = f" (read as {root[key]})" if written != str(root[key]) else ""
            assign = f"{key}: " if sep == ":" else f"{key} = "
            raise ConfigError(f"{path}:{line}: {key}: {written} is a number{read}, not a release; "
                              f'write it as a string: {assign}"{written}"')
    try:
        return LoadedConfig(Config.model_validate(root), path, lines)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(err["loc"])
        line = LoadedConfig(Config(), path, lines).line_of(*loc)
        field_name = ".".join(str(p) for p in loc)
        raise ConfigError(f"{path}:{line}: {field_name}: {err['msg']}") from None


def check_policy_ids(loaded: LoadedConfig, policies: list[Policy]) -> None:
    """Every selector in `policies:` must select a policy and every `severity:` key must be a policy id:
    a typo would silently select, ignore or change nothing."""
    c = loaded.config
    named: list[tuple[str, tuple[str | int, ...]]] = [
        *((s, ("policies", "select", i)) for i, s in enumerate(c.policies.select or ())),
        *((s, ("policies", "ignore", i)) for i, s in enumerate(c.policies.ignore)),
    ]
    for selector, route in named:
        if selectors.unknown([selector], policies):
            raise ConfigError(f"{loaded.path}:{loaded.line_of(*route)}: {route[0]}.{route[1]}: "
                              f"{selectors.problem(selector, policies)}")
    known = {p.id for p in policies}
    for pid in c.severity:
        if pid not in known:
            line = loaded.line_of("severity", pid)
            raise ConfigError(f"{loaded.path}:{line}: unknown policy {pid!r}; see `sunset policies list`")
