"""The `sunset` command's entry point, named after the distribution (`gitlab-sunset`) so no other
distribution installs a module of this name.

sunset's import packages keep their short names, `scanner` and `streams`. Those names are not
unique on the index (an unrelated PyPI project is called `scanner`), and Python offers no namespace
that two distributions cannot both fill: pip lets a later install overwrite another distribution's
`scanner/`, and a `scanner/` folder on PYTHONPATH or in the working directory of `python -m` comes
first on `sys.path`. So before anything else is imported, this module checks that each package
resolves to the folder beside this file (nothing earlier on the path shadows it) and carries this
distribution's mark (`DISTRIBUTION = "gitlab-sunset"` in its `__init__`, which another distribution
that overwrote it does not have). Either failure is one line on stderr and exit 2. pipx gives sunset
an environment of its own, where neither can happen; that is the installation the README shows.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys

NAME = "gitlab-sunset"
PACKAGES = ("scanner", "streams")


def shadowing_problem() -> str | None:
    """Why `scanner` or `streams` is not this distribution's own package, or None when both are."""
    here = os.path.dirname(os.path.abspath(__file__))
    for package in PACKAGES:
        spec = importlib.util.find_spec(package)
        origin = spec.origin if spec is not None else None
        if origin is None:
            return f"the package `{package}` of {NAME} is missing; reinstall: pipx install --force {NAME}"
        folder = os.path.dirname(os.path.dirname(os.path.abspath(origin)))
        if not os.path.samefile(folder, here):
            return (
                f"`{package}` resolves to {origin}, not to {NAME}'s own package in {here} "
                "(a folder on PYTHONPATH or in the working directory shadows it); "
                f"run sunset from its own environment: pipx install {NAME}"
            )
        if getattr(importlib.import_module(package), "DISTRIBUTION", None) != NAME:
            return (
                f"{origin} belongs to another distribution that installed a top-level `{package}` over {NAME}'s; "
                f"install sunset in its own environment: pipx install {NAME}"
            )
    return None


def main(argv: list[str] | None = None) -> int:
    problem = shadowing_problem()
    if problem is not None:
        sys.stderr.write(f"sunset: {problem}\n")
        return 2
    from scanner.cli import main as run

    return run(argv)


if __name__ == "__main__":
    sys.exit(main())
