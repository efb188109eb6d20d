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
from scanner.commands.settings import DEFAULT, Sources, listed, shown_path
from scanner.commands.stdin import stdin_file
from scanner.core.exits import EXIT_FINDINGS, EXIT_OK, UsageError
from scanner.core.files import MAX_FILE_BYTES, display_base, named_repo_root, scan_base
from scanner.core.results import Report
from scanner.core.versions import SEVERITY_RANK, Version
from scanner.engine import select as selectors
from scanner.engine.discovery import CONFIG_NAME, OutsideRepository, config_folders, find_config
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


def _read_config(path: Path, policies: list[Policy]) -> LoadedConfig:
    from scanner.engine.config import ConfigError, check_policy_ids, load_config  # only when there is one

    try:
        loaded = load_config(path)
        check_policy_ids(loaded, policies)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    return loaded


def _selectors(values: list[str] | None, flag: str, policies: list[Policy]) -> list[str] | None:
    """`--select a,b --select c`: the selectors, each checked (a typo would silently select nothing)."""
    if values is None:
        return None
    given = [i.strip() for v in values for i in v.split(",") if i.strip()]
    if not given and flag == "--select":
        raise UsageError(f"{flag}: no policy id given (an empty value would run no policy)")
    for selector in selectors.unknown(given, policies):
        raise UsageError(f"{flag}: {selectors.problem(selector, policies)}")
    return given


def _select(policies: list[Policy], loaded: LoadedConfig | None, args: argparse.Namespace,
            src: Sources) -> list[Policy]:
    """`--select` replaces the file's `select`; `--ignore` adds to its `ignore` (`scanner.engine.select`)."""
    sel = loaded.config.policies if loaded else None
    select = src.pick("select", _selectors(getattr(args, "select", None), "--select", policies), "--select",
                      list(sel.select) if sel is not None and sel.select is not None else None, lambda: None,
                      "default: every policy", show=lambda v: listed(v) if v is not None else "all",
                      route=("policies", "select"))
    from_flag = _selectors(getattr(args, "ignore", None), "--ignore", policies) or []
    ignore = [*(sel.ignore if sel else ()), *from_flag]
    origins = [src.where("policies", "ignore") if sel and sel.ignore else "", "--ignore" if from_flag else ""]
    src.add("ignore", listed(ignore), " + ".join(filter(None, origins)) or DEFAULT)
    chosen = selectors.choose(policies, select, ignore)
    src.add("selected", f"{len(chosen)} of {len(policies)} policies", "select less ignore")
    return chosen


def _excludes(args: argparse.Namespace, loaded: LoadedConfig | None, src: Sources) -> tuple[str, ...]:
    """`--exclude` replaces the file's `exclude`; `--extend-exclude` adds to it (gitignore patterns)."""
    def split(values: list[str] | None) -> list[str]:
        return [p.strip() for v in values or () for p in v.split(",") if p.strip()]

    given = getattr(args, "exclude", None)
    base = src.pick("exclude", split(given) if given is not None else None, "--exclude",
                    list(loaded.config.exclude) if loaded and loaded.config.exclude else None, list, show=listed)
    extra = split(getattr(args, "extend_exclude", None))
    if extra:
        src.add("extend_exclude", listed(extra), "--extend-exclude")
    return (*base, *extra)


def plan(args: argparse.Namespace, progress: object = None, sources: Sources | None = None) -> Plan:
    """The scan the flags and the configuration file ask for; `sources` records where each value came
    from (`sunset scan --show-settings`)."""
    paths = [Path(p) for p in args.paths if p != "-"]
    stdin = stdin_file(args)
    policies = load(args.policies)
    src = Sources() if sources is None else sources
    loaded: LoadedConfig | None = None
    try:
        config_path = find_config(args.config, scan_base(paths or [Path.cwd()]))
    except OutsideRepository as exc:
        raise UsageError(str(exc)) from None
    if config_path is not None:
        loaded = _read_config(config_path, policies)
    src.loaded = loaded
    src.add("configuration", shown_path(config_path) if config_path else "none", _config_origin(args, config_path))
    src.add("policies", f"{len(policies)} loaded ({listed(['built in', *(args.policies or ())])})",
            "--policies" if args.policies else DEFAULT)
    cfg = loaded.config if loaded else None
    try:
        target = Version.parse(release(src.pick("target", args.target, "--target", cfg and cfg.target,
                                        lambda: default_target(policies), "default: the newest release any policy "
                                        "names", show=release)))
    except ValueError as exc:
        raise UsageError(f"--target: {exc}") from None
    fail_on = src.pick("fail_on", args.fail_on, "--fail-on", cfg and cfg.fail_on, lambda: "warning")
    chosen = _select(policies, loaded, args, src)
    current = current_release(args, cfg.from_ if cfg else None)
    if current is not None and current >= target:
        raise UsageError(f"--from {current} is not before the target {target}: nothing to upgrade")
    src.add("from", str(current) if current else "none", "--from" if getattr(args, "current", None) else
            src.where("from") if cfg and cfg.from_ else DEFAULT)
    file_baseline = cfg.baseline if cfg and not args.write_baseline else None
    baseline_file = src.pick("baseline", args.baseline, "--baseline", file_baseline, lambda: None,
                             show=lambda v: v or "none")
    if args.baseline:
        baseline = read_baseline(Path(args.baseline))
    elif baseline_file and loaded is not None:  # the file's own paths are from its folder, inside its repository
        baseline = read_baseline(loaded.path.parent / baseline_file,
                                 named_repo_root(loaded.path, loaded.path.parent, False))
    else:
        baseline = frozenset()
    options = ScanOptions(
        target=target,
        current=current,
        max_file_bytes=args.max_file_size,
        progress=progress,  # type: ignore[arg-type]
        severity=src.pick("severity", None, "", dict(cfg.severity) if cfg and cfg.severity else None, dict,
                          show=listed),
        baseline=baseline,
        exclude=_excludes(args, loaded, src),
        exclude_base=loaded.path.parent if loaded else display_base(paths),
        kinds=src.pick("kinds", None, "", dict(cfg.kinds) if cfg and cfg.kinds else None, dict, show=listed),
        ci_configs=_ci_configs(args, loaded),
        display=display_base(paths),  # paths from the working directory, as editors and `git apply` read them
        stdin=stdin,
    )
    src.add("ci_config_path", listed([c.given or c.value for c in options.ci_configs]),
            " + ".join(filter(None, ["--ci-config" if getattr(args, "ci_config", None) else "",
                                     src.where("ci_config_path") if cfg and cfg.ci_config_path else ""])) or DEFAULT)
    src.add("max_file_size", f"{args.max_file_size} bytes",
            DEFAULT if args.max_file_size == MAX_FILE_BYTES else "--max-file-size")
    return Plan(paths, chosen, options, fail_on)


def _config_origin(args: argparse.Namespace, found: Path | None) -> str:
    if args.config:
        return "--config"
    if found is None:
        return (f"none found: no {CONFIG_NAME} and no pyproject.toml with [tool.sunset] in the working directory, "
                "the scanned folder, or their parents up to the repository root")
    here = config_folders(Path.cwd())
    return "found from the working directory" if found.parent in here else "found from the scanned folder"


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
    """The one table (scanner.core.exits): input errors count as `error`, so `--fail-on never` is 0.
    With `--diff-base`, only what the change adds counts."""
    if fail_on == "never":
        return EXIT_OK
    if report.new_errors():
        return EXIT_FINDINGS
    threshold = SEVERITY_RANK[fail_on]
    return EXIT_FINDINGS if any(SEVERITY_RANK[f.severity] >= threshold for f in report.new_findings()) else EXIT_OK


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
    """The scan; `progress` hears of each file (an instance scan: of each project)."""
    if getattr(args, "group", None):  # an instance scan, through GitLab's API
        from scanner.commands import instance

        if getattr(args, "diff_base", None):
            raise UsageError("--diff-base compares a checkout; it cannot be used with --group")
        p = plan(args)
        report = instance.run(args, p, progress)  # type: ignore[arg-type]
    else:
        p = plan(args, progress)
        report = scan(p.paths, p.policies, p.options)
        if getattr(args, "diff_base", None):
            from scanner.commands import diffbase

            report = diffbase.compare(report, p, args.diff_base)
    if p.options.current is not None:
        from scanner.core.upgrade import plan as upgrade_plan

        report.upgrade = upgrade_plan(report.findings, p.options.current, p.options.target)
    return report, p
