"""docs/gitlab-record.md: every entry of GitLab's pages names its policies, what a policy would match,
or why files cannot show it; the ids exist; the generated table is not stale (issue 12)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from scanner.report import record
from scanner.report.record import (
    Entry,
    RecordError,
    contradictions,
    load_file,
    load_record,
    problems,
    render,
    slug,
)
from scanner.rules.policy import Policy

HEAD = "source: {repo: gitlabhq/gitlabhq, path: doc/x.md, commit: abc}\npage: https://docs.gitlab.com/x/\nentries:\n"


def _load(tmp_path: Path, body: str) -> list[Entry]:
    path = tmp_path / "page.yaml"
    path.write_text(HEAD + body, encoding="utf-8")
    return load_file(path)[1]


def test_the_committed_table_is_not_stale() -> None:
    sources, entries = load_record()
    assert record.OUT.read_text(encoding="utf-8") == render(sources, entries), (
        "docs/gitlab-record.md is stale: run `python -m scanner.report.record`"
    )
    assert record.main(["--check"]) == 0


def test_every_entry_is_decided_and_names_real_policies(policies: list[Policy]) -> None:
    _, entries = load_record()  # an entry with no verdict does not load (next test)
    assert problems(entries, {p.id for p in policies}) == []


def test_an_entry_without_policies_todo_or_why_fails(tmp_path: Path) -> None:
    with pytest.raises(RecordError, match=r"page.yaml: entry 1 \(Some field\): needs exactly one of"):
        _load(tmp_path, "  - {title: Some field, removal: '18.0', type: graphql}\n")
    with pytest.raises(RecordError, match="needs exactly one of"):
        _load(tmp_path, "  - {title: Both, type: ci, policies: [x], why: because}\n")
    with pytest.raises(RecordError, match="type none .* needs a why"):
        _load(tmp_path, "  - {title: UI page, type: none, todo: something}\n")
    with pytest.raises(RecordError, match="not a release"):
        _load(tmp_path, "  - {title: X, type: ci, why: w, removal: 18}\n")


def test_an_unknown_policy_id_is_a_problem(tmp_path: Path) -> None:
    entries = _load(tmp_path, "  - {title: A thing, removal: '18.0', type: ci, policies: [no-such-policy]}\n")
    assert problems(entries, {"runner-cmd-shell"}) == ["page.yaml: A thing: no policy 'no-such-policy'"]


def test_each_policy_citing_an_entry_is_listed_by_it(policies: list[Policy]) -> None:
    """A policy whose documentation link is an entry of a recorded page is among that entry's policies."""
    _, entries = load_record()
    by_url = {e.url: e for e in entries}
    pages = {e.page for e in entries}
    wrong = []
    for p in policies:
        page = p.docs_url.split("#", 1)[0]
        if page in pages and p.id not in (by_url[p.docs_url].policies if p.docs_url in by_url else ()):
            wrong.append(f"{p.id}: {p.docs_url}")
    assert wrong == []


@pytest.mark.parametrize(
    ("title", "anchor"),
    [
        ("CI/CD job token - **Authorized groups and projects** allowlist enforcement",
         "cicd-job-token---authorized-groups-and-projects-allowlist-enforcement"),
        ("`workflow:rules` templates", "workflowrules-templates"),
        ("The `ci_job_token_scope_enabled` projects API attribute is deprecated",
         "the-ci_job_token_scope_enabled-projects-api-attribute-is-deprecated"),
    ],
)
def test_anchors_follow_gitlab_docs(title: str, anchor: str) -> None:
    assert slug(title) == anchor


def test_header_counts_per_file_type(tmp_path: Path) -> None:
    entries = _load(
        tmp_path,
        "  - {title: A, removal: '18.0', type: ci, policies: [p1]}\n"
        "  - {title: B, removal: '18.0', type: ci, todo: match this}\n"
        "  - {title: C, removal: '17.0', type: ci, why: run time}\n"
        "  - {title: D, type: none, why: a UI page}\n",
    )
    text = render([{"path": "doc/x.md", "page": "https://docs.gitlab.com/x/", "commit": "abc"}], entries)
    assert ("4 entries (4 lines, 0 of them the same change as another page's entry); 2 detectable from files; "
            "1 covered by a policy (50%).") in text
    assert "| CI YAML | 3 | 2 | 1 |" in text
    assert "| 18.0 | [B](https://docs.gitlab.com/x/#b) | — | ci | not yet: match this |" in text
    assert "| pending | [D](https://docs.gitlab.com/x/#d) | — | none | — a UI page |" in text


def test_a_same_change_is_counted_once_with_the_verdict_of_the_entry_it_names(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(
        HEAD + "  - {title: Old field, removal: '16.0', type: graphql, policies: [p1]}\n", encoding="utf-8")
    (tmp_path / "b.yaml").write_text(
        "source: {repo: gitlabhq/gitlabhq, path: doc/y.md, commit: def}\npage: https://docs.gitlab.com/y/\nentries:\n"
        "  - {title: Old field removed, removal: '16.0', same_as: 'https://docs.gitlab.com/x/#old-field'}\n"
        "  - {title: Gone, removal: '16.0', same_as: 'https://docs.gitlab.com/x/#no-such-entry'}\n",
        encoding="utf-8")
    sources, entries = load_record(tmp_path)
    same = [e for e in entries if e.title == "Old field removed"][0]
    assert (same.type, same.policies) == ("graphql", ("p1",))
    assert problems(entries, {"p1"}) == [
        "b.yaml: Gone: same_as names no recorded entry (https://docs.gitlab.com/x/#no-such-entry)"]
    text = render(sources, entries)
    assert "| GraphQL documents | 1 | 1 | 1 |" in text
    assert ("| 16.0 | [Old field removed](https://docs.gitlab.com/y/#old-field-removed) | — | graphql | same change as "
            "[old-field](https://docs.gitlab.com/x/#old-field); [p1](policies/p1.md) |") in text
    with pytest.raises(RecordError, match="same_as takes its type and verdict from that entry"):
        _load(tmp_path, "  - {title: X, type: ci, why: w, same_as: 'https://docs.gitlab.com/x/#y'}\n")


@pytest.mark.parametrize(
    ("kind", "extract", "data"),
    [("deprecations", "deprecations-beebb1d.md", "deprecations.yaml"),
     ("removals", "removals-2536b66.md", "removals.yaml"),
     ("removals", "removals-16_0-data.md", "removals-16.0-data.yaml"),
     ("graphql", "graphql-removed-items-ec05f6e.md", "graphql-removed-items.yaml")],
)
def test_the_transcribed_pages_hold_every_heading_of_their_extract(kind: str, extract: str, data: str) -> None:
    """The data files are what the transcription script reads off the committed extracts: same
    titles, anchors and milestones, in the page's order (15.0 and later only)."""
    from scanner.report import transcribe

    parsed = transcribe.PARSERS[kind]((record.DATA / "sources" / extract).read_text(encoding="utf-8"))
    _, loaded = load_file(record.DATA / data)
    entries = [e for e in loaded if not e.vanished]
    assert [(e.title, e.removal, e.announced) for e in entries] == [(p.title, p.removal, p.announced) for p in parsed]
    assert [e.anchor for e in entries] == [p.anchor or slug(p.title) for p in parsed]
    assert [e.status for e in entries] == [p.status or "scheduled" for p in parsed]


def test_transcription_reads_headings_and_table_rows() -> None:
    from scanner.report.transcribe import Parsed, graphql_removed, removals

    page = ("## Removed in 16.0\n\n### `CI_BUILD_*` variables\n#### A part of it\n### Other\n"
            "Announced in 15.9 <!-- x -->\n## Removed in 14.10\n\n### Too old\nAnnounced in 13.0\n")
    assert removals(page) == [Parsed("`CI_BUILD_*` variables", "16.0"), Parsed("Other", "16.0", "15.9")]
    table = ("## GitLab 16.0\n\n| Field name | GraphQL type | Deprecated in |\n|---|---|---|\n"
             "| `name` | `Finding` | [15.1](https://x) |\n\n| Argument name | Mutation | Deprecated in |\n"
             "| --- | --- | --- |\n| `ids` | `todosMarkAllDone` | 13.2 |\n")
    assert graphql_removed(table) == [
        Parsed("`Finding.name`", "16.0", "15.1", "gitlab-160"),
        Parsed("`ids` argument of `todosMarkAllDone` mutation", "16.0", "13.2", "gitlab-160"),
    ]


def test_no_policy_contradicts_gitlabs_record(policies: list[Policy]) -> None:
    """Each policy's effective release and status (its history applied) is what an entry naming it says."""
    _, entries = load_record()
    removals = {p.id: (p.removal.status, p.removal.release) for p in policies}
    assert contradictions(entries, removals) == []


def test_a_policy_that_disagrees_with_the_record_is_named(tmp_path: Path) -> None:
    entries = _load(tmp_path, (
        "  - {title: Moved, removal: '23.0', type: settings, policies: [p-moved]}\n"
        "  - {title: Gone soon, status: pending, type: graphql, policies: [p-pending]}\n"
        "  - {title: Kept, removal: '18.0', status: withdrawn, type: rest, policies: [p-kept]}\n"
        "  - {title: Empty value, removal: '18.0', breaks: '17.0', type: rest, policies: [p-breaks]}\n"))
    told = {"p-moved": ("scheduled", "18.0"), "p-pending": ("scheduled", "18.0"), "p-kept": ("scheduled", "18.0"),
            "p-breaks": ("scheduled", "17.0")}
    assert contradictions(entries, told) == [
        "p-kept: scheduled 18.0, but GitLab's record says withdrawn",
        "p-moved: scheduled 18.0, but GitLab's record says scheduled 23.0",
        "p-pending: scheduled 18.0, but GitLab's record says pending",
    ]
    agreed = {"p-moved": ("scheduled", "23.0"), "p-pending": ("pending", None), "p-kept": ("withdrawn", None),
              "p-breaks": ("scheduled", "18.0")}
    assert contradictions(entries, agreed) == []


def test_statuses_must_fit_their_release(tmp_path: Path) -> None:
    with pytest.raises(RecordError, match="a pending change has no release"):
        _load(tmp_path, "  - {title: X, removal: '18.0', status: pending, type: ci, why: w}\n")
    with pytest.raises(RecordError, match="a withdrawn change names its release"):
        _load(tmp_path, "  - {title: X, status: withdrawn, type: ci, why: w}\n")
    with pytest.raises(RecordError, match="status must be one of"):
        _load(tmp_path, "  - {title: X, status: postponed, type: ci, why: w}\n")
    text = render([{"path": "doc/x.md", "page": "https://docs.gitlab.com/x/", "commit": "abc"}], _load(tmp_path, (
        "  - {title: Kept, removal: '18.0', status: withdrawn, type: ci, why: w}\n"
        "  - {title: Gone, removal: '19.0', vanished: 01fb56dbcfe3, type: ci, why: w,\n"
        "     verdict: {status: removed, release: '19.0', source: 'https://gitlab.com/g/p/-/merge_requests/7',\n"
        "               read: removed as announced}}\n")))
    assert "| 18.0, withdrawn | [Kept](https://docs.gitlab.com/x/#kept) |" in text
    assert ("| removed 19.0 (listed for 19.0 until `01fb56d`; see below) | "
            "[Gone](https://docs.gitlab.com/x/#gone) |") in text
    assert ("| [Gone](https://docs.gitlab.com/x/#gone) | 19.0 at `01fb56d` | **removed 19.0**: removed as announced | "
            "[g/p!7](https://gitlab.com/g/p/-/merge_requests/7) |") in text


VANISHED = "  - {title: Gone, removal: '18.0', vanished: 88d3e50, type: graphql, policies: [p-gone]%s}\n"


def test_an_entry_the_page_no_longer_lists_needs_a_verdict_with_its_source(tmp_path: Path) -> None:
    with pytest.raises(RecordError, match=r"entry 1 \(Gone\): the page no longer lists it: needs a `verdict`"):
        _load(tmp_path, VANISHED % "")
    bad = {
        ", verdict: {status: gone, source: 'https://x', read: r}": "verdict status must be one of removed, moved",
        ", verdict: {status: moved, source: 'https://x', read: r}": "verdict moved names the release",
        ", verdict: {status: pending, release: '19.0', source: 'https://x', read: r}": "verdict pending has no release",
        ", verdict: {status: pending, source: 'gitlab#5', read: r}": "verdict source must be the https URL",
        ", verdict: {status: pending, source: 'https://x'}": "verdict read says what the source says",
        ", verdict: {status: pending, source: 'https://x', read: r, why: w}": "verdict: unknown keys why",
    }
    for extra, message in bad.items():
        with pytest.raises(RecordError, match=message):
            _load(tmp_path, VANISHED % extra)
    with pytest.raises(RecordError, match="a verdict is for an entry the page no longer lists"):
        _load(tmp_path, "  - {title: X, removal: '18.0', type: ci, why: w, verdict: {status: pending}}\n")


@pytest.mark.parametrize(("verdict", "status", "removal"), [
    ("{status: removed, release: '18.0', source: 'https://x', read: r}", "scheduled", "18.0"),
    ("{status: moved, release: '20.0', source: 'https://x', read: r}", "scheduled", "20.0"),
    ("{status: pending, source: 'https://x', read: r}", "pending", None),
    ("{status: canceled, source: 'https://x', read: r}", "canceled", None),
    ("{status: withdrawn, source: 'https://x', read: r}", "withdrawn", "18.0"),
])
def test_a_verdict_is_the_entrys_status_and_policies_must_follow_it(
        tmp_path: Path, verdict: str, status: str, removal: str | None) -> None:
    """The release the page last listed stays as history (`listed`); the contradiction check compares a
    policy with the verdict, not with the release GitLab gave up."""
    [entry] = _load(tmp_path, VANISHED % f", verdict: {verdict}")
    assert (entry.status, entry.removal, entry.listed, entry.verdict_source) == (status, removal, "18.0", "https://x")
    assert contradictions([entry], {"p-gone": (status, removal)}) == []
    if (status, removal) != ("scheduled", "18.0"):
        told = f"{status} {removal}" if removal and status == "scheduled" else status
        assert contradictions([entry], {"p-gone": ("scheduled", "18.0")}) == [
            f"p-gone: scheduled 18.0, but GitLab's record says {told}"]


def test_every_vanished_entry_has_a_verdict_and_the_report_shows_it() -> None:
    """docs/record/changes-deprecations.md ends with the verdicts of every entry the newest copy no longer
    lists, as `transcribe` writes them from the data file."""
    from scanner.report.transcribe import verdicts

    _, entries = load_record()
    gone = [e for e in entries if e.vanished]
    assert gone and all(e.verdict and e.verdict_source.startswith("https://") and e.verdict_read for e in gone)
    rows = YAML(typ="safe").load((record.DATA / "deprecations.yaml").read_text(encoding="utf-8"))["entries"]
    report = (record.DATA / "changes-deprecations.md").read_text(encoding="utf-8")
    section = "\n".join(verdicts(rows))
    assert report.endswith(section) and report.count("## No longer listed") == 1
    assert len([line for line in section.splitlines() if line.startswith("- ")]) == len(
        [e for e in gone if e.source == "deprecations.yaml"])


PAGE = """# Deprecations and removals by version

## GitLab 20.0

### Compliance pipelines
- Announced in GitLab 17.3
- Removal in GitLab 20.0
### Secure analyzers major version update
- Announced in GitLab 16.9
- Removal in GitLab 20.0

## GitLab 18.0

### Rename the option
- Announced in GitLab 17.3
- Removal in GitLab 18.0
- Not removed: we no longer will remove the old option in GitLab 18.0.
### Secure analyzers major version update
- Announced in GitLab 15.9
- Removal in GitLab 18.0

## GitLab 14.10

### Too old
- Announced in GitLab 14.9
- Removal in GitLab 14.10

## Pending changes

### OpenTofu CI/CD template
- Announced in GitLab 17.1

## Canceled changes

### Container scanning default severity threshold set to `medium`
- Announced in GitLab 17.9
"""


def test_the_deprecations_page_is_read_with_its_statuses() -> None:
    from scanner.report.transcribe import Parsed, deprecations

    assert deprecations(PAGE) == [
        Parsed("Compliance pipelines", "20.0", "17.3"),
        Parsed("Secure analyzers major version update", "20.0", "16.9"),
        Parsed("Rename the option", "18.0", "17.3", None, "withdrawn"),
        Parsed("Secure analyzers major version update", "18.0", "15.9", "secure-analyzers-major-version-update-1"),
        Parsed("OpenTofu CI/CD template", None, "17.1", None, "pending"),
        Parsed("Container scanning default severity threshold set to `medium`", None, "17.9", None, "canceled"),
    ]
    with pytest.raises(ValueError, match="removal 19.0 under the section of 20.0"):
        deprecations("## GitLab 20.0\n\n### X\n- Removal in GitLab 19.0\n")


def _rerun(tmp_path: Path, old: list[dict[str, object]], was: str, now: str) -> Path:
    """Transcribe PAGE over a data file holding `old` (read at commit `was`) as commit `now`."""
    from scanner.report import transcribe

    page = tmp_path / "page.md"
    page.write_text(PAGE, encoding="utf-8")
    out = tmp_path / "deprecations.yaml"
    out.write_text(f"source: {{repo: m/gitlab, path: doc/update/deprecations.md, commit: {was}}}\n"
                   "page: https://docs.gitlab.com/update/deprecations/\nentries:\n"
                   + "".join(f"  - {json.dumps(e)}\n" for e in old), encoding="utf-8")
    assert transcribe.main(["deprecations", str(page), str(out), "--commit", now]) == 0
    return out


def test_a_rerun_keeps_decisions_and_reports_what_changed(tmp_path: Path) -> None:
    """Decisions follow an entry to its new release, status or letter case; an entry the page no longer
    lists stays, marked vanished with the commit of the copy it was last read in; the report says so."""

    old = [
        {"title": "Compliance pipelines", "announced": "17.3", "removal": "19.0", "type": "none", "why": "UI"},
        {"title": "OpenTofu CI/CD template", "announced": "17.1", "removal": "18.0", "type": "ci",
         "policies": ["opentofu-templates"]},
        {"title": "Container Scanning default severity threshold set to `medium`", "announced": "17.9",
         "removal": "18.0", "type": "ci", "policies": ["cs-severity-threshold-medium"]},
        {"title": "Slack notifications integration", "announced": "15.9", "removal": "19.0", "type": "rest",
         "policies": ["rest-deprecated-integrations"]},
    ]
    out = _rerun(tmp_path, old, "aaa", "bbb")
    data = YAML(typ="safe").load(out.read_text(encoding="utf-8"))
    by_title = {e["title"]: e for e in data["entries"]}
    assert data["source"] == {"repo": "m/gitlab", "path": "doc/update/deprecations.md", "commit": "bbb"}
    assert by_title["Compliance pipelines"] == {"title": "Compliance pipelines", "announced": "17.3",
                                                 "removal": "20.0", "type": "none", "why": "UI"}
    assert by_title["OpenTofu CI/CD template"]["status"] == "pending"
    assert by_title["OpenTofu CI/CD template"]["policies"] == ["opentofu-templates"]
    assert by_title["Container scanning default severity threshold set to `medium`"]["policies"] == [
        "cs-severity-threshold-medium"]
    assert by_title["Slack notifications integration"]["vanished"] == "aaa"
    assert "type" not in by_title["Rename the option"]  # new: a person decides
    report = (tmp_path / "changes-deprecations.md").read_text(encoding="utf-8")
    assert report.splitlines() == [
        "# doc/update/deprecations.md: aaa -> bbb", "",
        "- Compliance pipelines: removal 19.0 -> removal 20.0",
        "- new: Secure analyzers major version update (removal 20.0, announced 16.9)",
        "- new: Rename the option (withdrawn, announced 17.3)",
        "- new: Secure analyzers major version update (removal 18.0, announced 15.9)",
        "- OpenTofu CI/CD template: removal 18.0 -> pending",
        "- Container scanning default severity threshold set to `medium`: removal 18.0 -> canceled",
        "- retitled: Container Scanning default severity threshold set to `medium` -> "
        "Container scanning default severity threshold set to `medium`",
        "- vanished: Slack notifications integration (was removal 19.0; last listed at aaa)",
        "",
        "## No longer listed: what GitLab did",
        "",
        "- Slack notifications integration (listed for 19.0 until aaa): no verdict yet",
    ]


def test_a_rerun_keeps_a_verdict_while_the_entry_stays_gone_and_drops_it_when_it_is_back(tmp_path: Path) -> None:

    verdict = {"status": "canceled", "source": "https://gitlab.com/g/p/-/merge_requests/9", "read": "kept"}
    old = [
        {"title": "Gone for good", "announced": "17.1", "removal": "18.0", "type": "ci", "why": "w",
         "vanished": "aaa", "verdict": verdict},
        {"title": "Compliance pipelines", "announced": "17.3", "removal": "19.0", "type": "none", "why": "UI",
         "vanished": "aaa", "verdict": verdict},
    ]
    out = _rerun(tmp_path, old, "bbb", "ccc")
    by_title = {e["title"]: e for e in YAML(typ="safe").load(out.read_text(encoding="utf-8"))["entries"]}
    assert by_title["Gone for good"]["verdict"] == verdict and by_title["Gone for good"]["vanished"] == "aaa"
    assert "verdict" not in by_title["Compliance pipelines"] and "vanished" not in by_title["Compliance pipelines"]
    report = (tmp_path / "changes-deprecations.md").read_text(encoding="utf-8")
    assert report.endswith("## No longer listed: what GitLab did\n\n- Gone for good (listed for 18.0 until aaa): "
                           "**canceled**: kept (https://gitlab.com/g/p/-/merge_requests/9)\n")


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(["status", "release", "source", "read", "other"]),
                       st.one_of(st.none(), st.integers(), st.text(max_size=12),
                                 st.sampled_from(["removed", "moved", "pending", "canceled", "withdrawn", "19.0",
                                                  "https://gitlab.com/x"]))))
def test_any_verdict_loads_or_is_refused_with_a_record_error(verdict: dict[str, object]) -> None:
    """Whatever a person writes as a verdict, loading gives an entry or a RecordError naming the entry."""
    raw = {"title": "Gone", "removal": "18.0", "vanished": "88d3e50", "type": "ci", "why": "w", "verdict": verdict}
    try:
        entry = record._entry(raw, "https://docs.gitlab.com/x/", "page.yaml", 1)
    except RecordError as e:
        assert str(e).startswith("page.yaml: entry 1 (Gone)")
    else:
        assert entry.verdict in record.VERDICTS and entry.status in record.STATUSES
