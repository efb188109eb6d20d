"""Severity follows GitLab's record as it stands today (issue 12).

A policy's `removed_in` is the release first announced; each entry of its `history` is a change
GitLab's record made since (moved, postponed, canceled). The last change decides: the effective
release makes a finding an error at or after it, a pending removal (no release) is a warning, a
canceled one is info at every target. The message keeps the whole story ("First announced for 18.0.
GitLab 18.0: … moved to 20.0.") and no error contradicts it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from scanner.core.versions import Version
from scanner.report.jsonfmt import finding_dict
from scanner.rules.policy import HistoryEntry, Policy, Removal, removal_of

from conftest import run_scan

FIXTURES = Path(__file__).parent / "policies"
TARGETS = ["16.0", "17.0", "18.0", "19.0", "20.0", "21.0", "22.0", "23.0"]
REF = "https://docs.gitlab.com/update/deprecations/"
# The release a history note says the removal went to: the last "to/for/in X.Y" in it.
SENT_TO = re.compile(r"\b(?:to|for|in)\s+(\d+\.\d+)\b")
NOT_REMOVED = re.compile(r"cancel|withdr|no longer removes|re-evaluat|no new (?:milestone|date)|pending", re.IGNORECASE)


def _h(event: str, removed_in: str | None = None, release: str = "18.0") -> HistoryEntry:
    return HistoryEntry(release, event, "note", REF, removed_in)


@pytest.mark.parametrize(
    ("removed_in", "history", "expected"),
    [
        ("18.0", (), Removal("scheduled", "18.0", "18.0")),
        (None, (), Removal("pending", None, None)),
        ("18.0", (_h("moved", "20.0"),), Removal("scheduled", "20.0", "18.0")),
        ("18.0", (_h("postponed"),), Removal("pending", None, "18.0")),
        ("18.0", (_h("canceled"),), Removal("canceled", None, "18.0")),
        ("17.0", (_h("moved", "18.0", "17.0"), _h("moved", "19.0")), Removal("scheduled", "19.0", "17.0")),
        ("18.0", (_h("canceled"), _h("moved", "19.0", "19.0")), Removal("scheduled", "19.0", "18.0")),
        ("18.0", (_h("withdrawn"),), Removal("withdrawn", None, "18.0")),
    ],
)
def test_effective_removal_is_the_last_change(
    removed_in: str | None, history: tuple[HistoryEntry, ...], expected: Removal
) -> None:
    assert removal_of(removed_in, history) == expected


def test_history_notes_agree_with_their_release(policies: list[Policy]) -> None:
    """A move's `removed_in` is the release its note names (the data cannot say 18.0 and mean 19.0)."""
    problems = []
    for p in policies:
        for h in p.data.history:
            said = SENT_TO.findall(h.note)
            if h.event in ("moved", "postponed") and h.removed_in and said and said[-1] != h.removed_in:
                problems.append(f"{p.id}: {h.release} {h.event} to {h.removed_in}, but the note says {said[-1]}")
            if h.event in ("moved", "postponed") and h.removed_in is None and said:
                problems.append(f"{p.id}: {h.release} {h.event} without a release, but the note names {said[-1]}")
    assert problems == []


@pytest.fixture(scope="module")
def reports(policies: list[Policy]) -> dict[str, list[dict[str, object]]]:
    folders = sorted(p for p in FIXTURES.glob("*/fail") if p.is_dir())
    return {t: [finding_dict(f) for f in run_scan(folders, policies, t).findings] for t in TARGETS}


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS)
def test_no_error_contradicts_its_own_record(target: str, reports: dict[str, list[dict[str, object]]]) -> None:
    """Every policy's fail fixtures at every target: an error is removed at or before the target by
    GitLab's record today, and its message (the history in it) says no later release and no cancel."""
    problems = []
    for f in reports[target]:
        removal = f["removal"]
        assert isinstance(removal, dict)
        message = str(f["message"])
        story = message.split("First announced for", 1)[1] if "First announced for" in message else ""
        told = SENT_TO.findall(story)
        if removal["status"] == "scheduled" and told and told[-1] != f["removed_in"]:
            problems.append(f"{f['rule_id']}: removed_in {f['removed_in']} but the message ends at {told[-1]}")
        if f["severity"] != "error":
            continue
        removed = f["removed_in"]
        if removal["status"] != "scheduled" or removed is None or Version.parse(str(removed)) > Version.parse(target):
            problems.append(f"{f['rule_id']}: error at {target} with removal {removal['status']} {removed}")
        if NOT_REMOVED.search(story):
            problems.append(f"{f['rule_id']}: error at {target} whose message says {story!r}")
    assert problems == []


def _one(findings: list[dict[str, object]], rule_id: str) -> dict[str, object]:
    found = [f for f in findings if f["rule_id"] == rule_id]
    assert found, rule_id
    return found[0]


def test_registration_tokens_moved_to_20_then_taken_off_the_page(reports: dict[str, list[dict[str, object]]]) -> None:
    """GitLab moved the removal to 20.0, then its page stopped listing it: pending, a warning at every
    target, and the message tells both steps."""
    levels = {t: _one(reports[t], "runner-registration-token")["severity"] for t in TARGETS}
    assert levels == {t: "warning" for t in TARGETS}
    f = _one(reports["18.0"], "runner-registration-token")
    assert f["removed_in"] is None
    assert str(f["message"]).endswith(
        "First announced for 18.0. GitLab 18.0: removal of registration tokens and server-side register "
        "arguments moved to 20.0. GitLab 19.0: GitLab's deprecations page no longer lists the 20.0 removal "
        "(gone at beebb1d, a 19.0-era copy); registration tokens stay deprecated and disabled by default, "
        "with no removal release named."
    )
    assert f["removal"] == {
        "status": "pending",
        "first_announced": "18.0",
        "history": [{"release": "18.0", "event": "moved", "removed_in": "20.0",
                     "note": "removal of registration tokens and server-side register arguments moved to 20.0."},
                    {"release": "19.0", "event": "postponed", "removed_in": None,
                     "note": "GitLab's deprecations page no longer lists the 20.0 removal (gone at beebb1d, a "
                             "19.0-era copy); registration tokens stay deprecated and disabled by default, with no "
                             "removal release named."}],
    }


def test_canceled_removal_is_info_at_every_target(reports: dict[str, list[dict[str, object]]]) -> None:
    for target in TARGETS:
        f = _one(reports[target], "license-scanning-report-artifact")
        assert (f["severity"], f["removed_in"]) == ("info", None), target
        assert f["removal"]["status"] == "canceled"  # type: ignore[index]
        assert f["removal"]["first_announced"] == "18.0"  # type: ignore[index]


def test_pending_removal_is_a_warning_at_every_target(reports: dict[str, list[dict[str, object]]]) -> None:
    for target in TARGETS:
        f = _one(reports[target], "graphql-previous-stage-jobs-or-needs")
        assert (f["severity"], f["removed_in"], f["removal"]["status"]) == ("warning", None, "pending")  # type: ignore[index]


def test_unmoved_policy_carries_an_empty_history(reports: dict[str, list[dict[str, object]]]) -> None:
    f = _one(reports["17.0"], "cs-disable-dependency-list")
    assert (f["severity"], f["removed_in"]) == ("error", "17.0")
    assert f["removal"] == {"status": "scheduled", "first_announced": "17.0", "history": []}
    assert "First announced" not in str(f["message"])


def test_policies_list_shows_the_effective_release(capsys: pytest.CaptureFixture[str]) -> None:
    from scanner.cli import main

    assert main(["policies", "list"]) == 0
    lines = {line.split()[0]: line.split()[1] for line in capsys.readouterr().out.splitlines()}
    assert lines["rest-audit-events-offset-pagination"] == "20.0"
    assert lines["runner-registration-token"] == "—"
    assert lines["registry-notifications-threshold"] == "canceled"
    assert lines["license-scanning-report-artifact"] == "canceled"
    assert lines["opentofu-templates"] == "—"


def test_withdrawn_removal_is_info_at_every_target(reports: dict[str, list[dict[str, object]]]) -> None:
    """GitLab kept the old name working (it says so under the entry): never an error, never a warning."""
    for pid in ("rest-pre-receive-secret-detection", "graphql-set-pre-receive-secret-detection",
                "secret-detection-skip-push-option"):
        for target in TARGETS:
            f = _one(reports[target], pid)
            assert (f["severity"], f["removed_in"], f["removal"]["status"]) == ("info", None, "withdrawn"), (  # type: ignore[index]
                pid, target)


def test_moved_removal_errors_only_from_its_new_release(reports: dict[str, list[dict[str, object]]]) -> None:
    levels = {t: _one(reports[t], "rest-audit-events-offset-pagination")["severity"] for t in TARGETS}
    assert levels == {t: ("error" if Version.parse(t) >= Version(20, 0) else "warning") for t in TARGETS}
    message = str(_one(reports["18.0"], "rest-audit-events-offset-pagination")["message"])
    assert "First announced for 18.0. GitLab " in message and message.rstrip(".").endswith("20.0")


def test_a_removal_gitlab_dropped_after_moving_it_is_info(reports: dict[str, list[dict[str, object]]]) -> None:
    """The registry's `threshold`: moved to 23.0, then dropped (the registry translates it): info everywhere."""
    for target in TARGETS:
        f = _one(reports[target], "registry-notifications-threshold")
        assert (f["severity"], f["removed_in"], f["removal"]["status"]) == ("info", None, "canceled"), target  # type: ignore[index]
    message = str(_one(reports["18.0"], "registry-notifications-threshold")["message"])
    assert "First announced for 18.0. GitLab 18.0: removal moved to 23.0" in message
    assert "GitLab 19.0: the registry translates a `threshold` into an equivalent `maxretries`" in message


def test_messages_do_not_name_a_release_gitlab_gave_up(policies: list[Policy]) -> None:
    """A moved, pending, canceled or withdrawn removal: the message proper (before the history GitLab's
    record adds) names no longer the release first announced."""
    wrong = []
    for p in policies:
        r = p.removal
        moved = r.announced and (r.status != "scheduled" or r.release != r.announced)
        if moved and re.search(rf"\b{re.escape(str(r.announced))}\b", p.data.message):
            wrong.append(f"{p.id}: {p.data.message}")
    assert wrong == []


def test_messages_name_what_the_file_says(reports: dict[str, list[dict[str, object]]]) -> None:
    """`{value}` in a message is the value written at the finding's path (a provider's name), not its key."""
    omniauth = [str(f["message"]) for f in reports["18.0"] if str(f["rule_id"]).startswith("omniauth-")]
    assert omniauth and not [m for m in omniauth if "`name`" in m]
    assert any(m.startswith("OmniAuth provider `facebook`") for m in omniauth), omniauth
    push = str(_one(reports["18.0"], "secret-detection-skip-push-option")["message"])
    assert "-o -o" not in push and push.startswith("`git push -o secret_detection.skip_all` still skips")
