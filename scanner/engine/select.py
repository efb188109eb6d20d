"""Which policies a scan runs: `--select`, `--ignore` and the configuration's `policies:` name them by
selector, as ruff's rule selectors do.

A selector is a policy id (`terraform-templates`), an id prefix ending at a dash (`graphql` and
`graphql-` both select every `graphql-…` policy; `rest-runner` every `rest-runner-…`), or a group:
the folder the policy file lies in (`runner` selects every policy under `policies/runner/`; a
`--policies DIR` of your own is the group named after its folder). A selector that selects nothing
is an error: a typo would otherwise select nothing, or ignore nothing, without a word.
"""

from __future__ import annotations

from collections.abc import Iterable

from scanner.rules.policy import Policy


def group(policy: Policy) -> str:
    """The policy's group: the name of the folder its file lies in."""
    return policy.source.parent.name


def selects(selector: str, policy: Policy) -> bool:
    pid = policy.id
    if selector.endswith("-"):
        return pid.startswith(selector)
    return pid == selector or pid.startswith(selector + "-") or group(policy) == selector


def unknown(selectors: Iterable[str], policies: list[Policy]) -> list[str]:
    """The selectors that select no policy, in their order."""
    return [s for s in selectors if not any(selects(s, p) for p in policies)]


def problem(selector: str, policies: list[Policy]) -> str:
    groups = ", ".join(sorted({group(p) for p in policies}))
    return (f"{selector!r} is no policy id, id prefix or group (groups: {groups}); "
            "see `sunset policies list`")


def choose(policies: list[Policy], select: list[str] | None, ignore: Iterable[str]) -> list[Policy]:
    """The policies `select` names (every policy when None), less those `ignore` names."""
    ignored = list(ignore)
    return [p for p in policies
            if (select is None or any(selects(s, p) for s in select)) and not any(selects(s, p) for s in ignored)]
