"""`sunset scan`: resolve flags and `.sunset.yml` into one scan, run it, render it, pick the exit code.

Flags win over the configuration file; the configuration file wins over defaults.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from scanner.core.exits import EXIT_FINDINGS, EXIT_OK, UsageError
from scanner.core.files import scan_base
from scanner.core.results import Report
from scanner.core.versions import SEVERITY_RANK, Version
from scanner.engine.scan import CiConfig, Plan, ScanOptions, scan
from scanner.report.formats import FORMATS
from scanner.report.options import RenderOptions
from scanner.rules.catalog import PolicyLoadError, load_policies
from scanner.rules.policy import Policy

if TYPE_CHECKING:
    from scanner.engine.config import LoadedConfig

BASELINE_VERSION = 1


def policy_dirs(extra: list[str] | None) -> list[Path]:
    from scanner.rules.catalog import builtin_policy_dir

    return [builtin_policy_dir(), *(Path(d) for d in extra or [])]


def load(extra: list[str] | None) -> list[Policy]:
    try:
        return load_policies(policy_dirs(extra))
    except PolicyLoadError as exc:
        raise UsageError(str(exc)) from None


def default_target(policies: list[Policy]) -> str:
    releases = {Version.parse(r) for p in policies for r in (p.data.deprecated_in, p.data.removed_in) if r}
    return str(max(releases)) if releases else "19.0"


def read_baseline(path: Path) -> frozenset[str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return frozenset(str(item["fingerprint"]) for item in data["findings"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"{path}: not a sunset baseline file ({exc})") from None


def write_baseline(path: Path, report: Report) -> None:
    items = sorted(
        ({"fingerprint": f.fingerprint, "rule_id": f.rule_id, "path": f.location.path} for f in report.findings),
        key=lambda i: (i["path"], i["rule_id"], i["fingerprint"]),
    )
    path.write_text(json.dumps({"version": BASELINE_VERSION, "findings": items}, indent=2) + "\n", encoding="utf-8")


CONFIG_NAME = ".sunset.yml"


def find_config(explicit: str | None, base: Path) -> Path | None:
    """`--config FILE`, else `.sunset.yml` in the current directory, else in the scanned directory."""
    if explicit:
        return Path(explicit)
    for folder in (Path.cwd(), base):
        if (folder / CONFIG_NAME).is_file():
            return folder / CONFIG_NAME
    return None


def _read_config(path: Path, policies: list[Policy]) -> LoadedConfig:
    from scanner.engine.config import ConfigError, check_policy_ids, load_config  # only when there is one

    try:
        loaded = load_config(path)
        check_policy_ids(loaded, {p.id for p in policies})
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    return loaded


def _select(policies: list[Policy], loaded: LoadedConfig | None) -> list[Policy]:
    if loaded is None:
        return policies
    sel = loaded.config.policies
    chosen = [p for p in policies if sel.select is None or p.id in sel.select]
    return [p for p in chosen if p.id not in sel.ignore]


def plan(args: argparse.Namespace, progress: object = None) -> Plan:
    paths = [Path(p) for p in args.paths]
    policies = load(args.policies)
    loaded: LoadedConfig | None = None
    config_path = find_config(args.config, scan_base(paths))
    if config_path is not None:
        loaded = _read_config(config_path, policies)
    cfg = loaded.config if loaded else None
    try:
        target = Version.parse(args.target or (cfg and cfg.target) or default_target(policies))
    except ValueError as exc:
        raise UsageError(f"--target: {exc}") from None
    baseline_file = args.baseline or (cfg.baseline if cfg and not args.write_baseline else None)
    baseline = read_baseline(Path(baseline_file)) if baseline_file else frozenset()
    options = ScanOptions(
        target=target,
        max_file_bytes=args.max_file_size,
        progress=progress,  # type: ignore[arg-type]
        severity=dict(cfg.severity) if cfg else {},
        baseline=baseline,
        exclude=cfg.exclude if cfg else (),
        kinds=dict(cfg.kinds) if cfg else {},
        ci_configs=_ci_configs(args, loaded),
    )
    fail_on = args.fail_on or (cfg and cfg.fail_on) or "warning"
    return Plan(paths, _select(policies, loaded), options, fail_on)


def _ci_configs(args: argparse.Namespace, loaded: LoadedConfig | None) -> tuple[CiConfig, ...]:
    """`--ci-config` paths from the working directory; `ci_config_path:` from the file's folder (the
    repository root, where GitLab reads the setting from)."""
    given = [CiConfig(_absolute(v, Path.cwd()), "--ci-config", 0, v) for v in getattr(args, "ci_config", None) or ()]
    if loaded is not None:
        folder = loaded.path.parent
        for i, value in enumerate(loaded.config.ci_config_path):
            line = loaded.line_of("ci_config_path", i)
            given.append(CiConfig(_absolute(value, folder), os.path.abspath(loaded.path), line, value))
    return tuple(given)


def _absolute(value: str, folder: Path) -> str:
    """A path made absolute from `folder`; `path@group/project` and URLs stay as written."""
    if "@" in value or "://" in value:
        return value
    return os.path.abspath(folder / value)


NOTHING_FOUND = (
    "sunset: no GitLab file found. Looked for pipeline roots (.gitlab-ci.yml, <name>.gitlab-ci.yml, CI/CD "
    "component templates) and settings files (gitlab.rb, gitlab.yml, database.yml, runner config.toml, registry "
    "config, Helm values, compose files, Dockerfiles, env files, Kubernetes manifests), and scripts that call "
    "GitLab's API. A project with a custom CI/CD configuration file (Settings > CI/CD > General pipelines): "
    "name it with --ci-config PATH, or `ci_config_path:` in .sunset.yml.\n"
)


def nothing_found(report: Report) -> bool:
    """No file was scanned and nothing went wrong: the paths hold nothing sunset reads."""
    return report.files_scanned == 0 and not report.errors and not report.includes


def exit_code(report: Report, fail_on: str) -> int:
    if report.errors:
        return EXIT_FINDINGS
    if fail_on == "never":
        return EXIT_OK
    threshold = SEVERITY_RANK[fail_on]
    return EXIT_FINDINGS if any(SEVERITY_RANK[f.severity] >= threshold for f in report.findings) else EXIT_OK


def render(report: Report, args: argparse.Namespace, policies: list[Policy]) -> str:
    """The report in `--format`; the format's module loads only now (`scanner.report.formats`)."""
    tty = args.output is None and sys.stdout.isatty()
    color = args.color == "always" or (args.color == "auto" and tty and "NO_COLOR" not in os.environ)
    options = RenderOptions(policies=tuple(policies), color=color, env=os.environ)
    return FORMATS[args.format](report, options)


def run(args: argparse.Namespace, progress: object = None) -> tuple[Report, Plan]:
    p = plan(args, progress)
    if getattr(args, "gitlab", None) or getattr(args, "group", None):  # an instance scan, through GitLab's API
        from scanner.commands import instance

        return instance.run(args, p), p
    return scan(p.paths, p.policies, p.options), p
