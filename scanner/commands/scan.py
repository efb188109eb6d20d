"""`sunset scan`: resolve flags and `.sunset.yml` into one scan, run it, render it, pick the exit code.

Flags win over the configuration file; the configuration file wins over defaults.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from scanner.commands.baseline import read_baseline
from scanner.commands.stdin import stdin_file
from scanner.core.exits import EXIT_FINDINGS, EXIT_OK, UsageError
from scanner.core.files import (
    display_base,
    named_repo_root,
    scan_base,
)
from scanner.core.results import Report
from scanner.core.versions import SEVERITY_RANK, Version
from scanner.engine.scan import CiConfig, Plan, ScanOptions, scan
from scanner.report.formats import FORMATS
from scanner.report.options import RenderOptions
from scanner.rules.catalog import PolicyLoadError, load_policies
from scanner.rules.policy import Policy

if TYPE_CHECKING:
    from scanner.engine.config import LoadedConfig



def policy_dirs(extra: list[str] | None) -> list[Path]:
    from scanner.rules.catalog import builtin_policy_dir

    return [builtin_policy_dir(), *(Path(d) for d in extra or [])]


def load(extra: list[str] | None) -> list[Policy]:
    try:
        return load_policies(policy_dirs(extra))
    except PolicyLoadError as exc:
        raise UsageError(str(exc)) from None


_LOOSE_RELEASE = re.compile(r"(0|[1-9]\d*)(?:\.(0|[1-9]\d*)(?:\.\d+)?)?")


def release(text: str) -> str:
    """`17` is 17.0 and `17.10.2` is 17.10: deprecations are scheduled per minor release."""
    m = _LOOSE_RELEASE.fullmatch(text.strip())
    return f"{m.group(1)}.{m.group(2) or 0}" if m else text


def default_target(policies: list[Policy]) -> str:
    releases = {Version.parse(r) for p in policies for r in (p.data.deprecated_in, p.removal.release) if r}
    return str(max(releases)) if releases else "19.0"


CONFIG_NAME = ".sunset.yml"
_TOOL_TABLE = re.compile(r"^[ \t]*\[tool\.sunset\][ \t]*(#.*)?$", re.M)


def find_config(explicit: str | None, base: Path) -> Path | None:
    """`--config FILE`; else `.sunset.yml`, or a `pyproject.toml` with `[tool.sunset]`, in the working
    directory or a parent up to the repository root (the first folder holding `.git`); else the same
    from the scanned folder."""
    if explicit:
        return Path(explicit)
    for start in (Path.cwd(), base):
        folder = Path(os.path.abspath(start))
        while True:
            if (folder / CONFIG_NAME).is_file():
                return folder / CONFIG_NAME
            if _has_tool_table(folder / "pyproject.toml"):
                return folder / "pyproject.toml"
            if (folder / ".git").exists() or folder.parent == folder:
                break
            folder = folder.parent
    return None


def _has_tool_table(path: Path) -> bool:
    try:
        return path.is_file() and _TOOL_TABLE.search(path.read_text(encoding="utf-8")) is not None
    except (OSError, UnicodeDecodeError):
        return False


def _read_config(path: Path, policies: list[Policy]) -> LoadedConfig:
    from scanner.engine.config import ConfigError, check_policy_ids, load_config  # only when there is one

    try:
        loaded = load_config(path)
        check_policy_ids(loaded, {p.id for p in policies})
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    return loaded


def _ids(values: list[str] | None, flag: str, known: set[str]) -> list[str] | None:
    """`--select a,b --select c`: the ids, each checked (a typo would silently select nothing)."""
    if values is None:
        return None
    ids = [i.strip() for v in values for i in v.split(",") if i.strip()]
    if not ids and flag == "--select":
        raise UsageError(f"{flag}: no policy id given (an empty value would run no policy)")
    for pid in ids:
        if pid not in known:
            raise UsageError(f"{flag}: unknown policy {pid!r}; see `sunset policies list`")
    return ids


def _select(policies: list[Policy], loaded: LoadedConfig | None, args: argparse.Namespace) -> list[Policy]:
    """`--select` replaces the file's `select`; `--ignore` adds to its `ignore`."""
    known = {p.id for p in policies}
    sel = loaded.config.policies if loaded else None
    select = _ids(getattr(args, "select", None), "--select", known)
    if select is None and sel is not None and sel.select is not None:
        select = list(sel.select)
    ignore = set(sel.ignore if sel else ()) | set(_ids(getattr(args, "ignore", None), "--ignore", known) or ())
    return [p for p in policies if (select is None or p.id in select) and p.id not in ignore]


def _excludes(args: argparse.Namespace, loaded: LoadedConfig | None) -> tuple[str, ...]:
    """`--exclude` replaces the file's `exclude`; `--extend-exclude` adds to it (gitignore patterns)."""
    def split(values: list[str] | None) -> list[str]:
        return [p.strip() for v in values or () for p in v.split(",") if p.strip()]

    given = getattr(args, "exclude", None)
    base = split(given) if given is not None else list(loaded.config.exclude if loaded else ())
    return (*base, *split(getattr(args, "extend_exclude", None)))


def plan(args: argparse.Namespace, progress: object = None) -> Plan:
    paths = [Path(p) for p in args.paths if p != "-"]
    stdin = stdin_file(args)
    policies = load(args.policies)
    loaded: LoadedConfig | None = None
    config_path = find_config(args.config, scan_base(paths or [Path.cwd()]))
    if config_path is not None:
        loaded = _read_config(config_path, policies)
    cfg = loaded.config if loaded else None
    try:
        target = Version.parse(release(args.target or (cfg and cfg.target) or default_target(policies)))
    except ValueError as exc:
        raise UsageError(f"--target: {exc}") from None
    current = current_release(args, cfg.from_ if cfg else None)
    if current is not None and current >= target:
        raise UsageError(f"--from {current} is not before the target {target}: nothing to upgrade")
    if args.baseline:
        baseline = read_baseline(Path(args.baseline))
    elif loaded is not None and loaded.config.baseline and not args.write_baseline:
        baseline = read_baseline(Path(loaded.config.baseline), named_repo_root(loaded.path, loaded.path.parent, False))
    else:
        baseline = frozenset()
    options = ScanOptions(
        target=target,
        current=current,
        max_file_bytes=args.max_file_size,
        progress=progress,  # type: ignore[arg-type]
        severity=dict(cfg.severity) if cfg else {},
        baseline=baseline,
        exclude=_excludes(args, loaded),
        exclude_base=loaded.path.parent if loaded else display_base(paths),
        kinds=dict(cfg.kinds) if cfg else {},
        ci_configs=_ci_configs(args, loaded),
        display=display_base(paths),  # paths from the working directory, as editors and `git apply` read them
        stdin=stdin,
    )
    fail_on = args.fail_on or (cfg and cfg.fail_on) or "warning"
    return Plan(paths, _select(policies, loaded, args), options, fail_on)


def current_release(args: argparse.Namespace, configured: str | None) -> Version | None:
    """The release the instance runs: `--from X.Y`, else `from:` of the configuration file; `--from
    gitlab` (implied by `--gitlab URL` without `--group`) asks the instance (scanner.gitlab.version)."""
    given = getattr(args, "current", None) or configured
    if given == "gitlab" or (not given and getattr(args, "gitlab", None) and not getattr(args, "group", None)):
        from scanner.gitlab.version import asked

        given = asked(getattr(args, "gitlab", None), os.environ)
    try:
        return Version.parse(release(given)) if given else None
    except ValueError as exc:
        raise UsageError(f"--from: {exc}") from None


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
    """The one table (scanner.core.exits): input errors count as `error`, so `--fail-on never` is 0."""
    if fail_on == "never":
        return EXIT_OK
    if report.errors:
        return EXIT_FINDINGS
    threshold = SEVERITY_RANK[fail_on]
    return EXIT_FINDINGS if any(SEVERITY_RANK[f.severity] >= threshold for f in report.findings) else EXIT_OK


def color_wanted(choice: str, tty: bool, env: Mapping[str, str]) -> bool:
    """`--color always/never` wins; `auto`: NO_COLOR (set, non-empty) turns colour off, FORCE_COLOR
    (set, non-empty) turns it on off a terminal, TERM=dumb turns it off; else a terminal has colour."""
    if choice != "auto":
        return choice == "always"
    if env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR"):
        return True
    return tty and env.get("TERM") != "dumb"


def snippet_width(tty: bool, env: Mapping[str, str]) -> int:
    """Snippets are clipped to a terminal's width; in files and pipes only when COLUMNS asks (0: never)."""
    if tty:
        return shutil.get_terminal_size().columns
    columns = env.get("COLUMNS", "")
    return int(columns) if columns.isdigit() else 0


def render(report: Report, fmt: str, args: argparse.Namespace, policies: list[Policy], to_stdout: bool) -> str:
    """The report in `fmt`; the format's module loads only now (`scanner.report.formats`)."""
    from scanner.report.formats import statistics

    tty = to_stdout and sys.stdout.isatty()
    options = RenderOptions(policies=tuple(policies), color=color_wanted(args.color, tty, os.environ),
                            env=os.environ, width=snippet_width(tty, os.environ))
    return statistics(report, options) if fmt == "statistics" else FORMATS[fmt](report, options)


def run(args: argparse.Namespace, progress: object = None) -> tuple[Report, Plan]:
    p = plan(args, progress)
    if getattr(args, "group", None):  # an instance scan, through GitLab's API
        from scanner.commands import instance

        report = instance.run(args, p)
    else:
        report = scan(p.paths, p.policies, p.options)
    if p.options.current is not None:
        from scanner.core.upgrade import plan as upgrade_plan

        report.upgrade = upgrade_plan(report.findings, p.options.current, p.options.target)
    return report, p
