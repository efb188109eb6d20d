"""docs/gitlab-record.md: every entry of GitLab's pages names its policies, what a policy would match,
or why files cannot show it; the ids exist; the generated table is not stale (issue 12)."""

from __future__ import annotations

from pathlib import Path

import pytest

from scanner.report import record
from scanner.report.record import Entry, RecordError, load_file, load_record, problems, render, slug
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
    [("removals", "removals-2536b66.md", "removals.yaml"),
     ("removals", "removals-16_0-data.md", "removals-16.0-data.yaml"),
     ("graphql", "graphql-removed-items-ec05f6e.md", "graphql-removed-items.yaml")],
)
def test_the_transcribed_pages_hold_every_heading_of_their_extract(kind: str, extract: str, data: str) -> None:
    """The data files are what the transcription script reads off the committed extracts: same
    titles, anchors and milestones, in the page's order (15.0 and later only)."""
    from scanner.report import transcribe

    parse = transcribe.removals if kind == "removals" else transcribe.graphql_removed
    parsed = parse((record.DATA / "sources" / extract).read_text(encoding="utf-8"))
    _, entries = load_file(record.DATA / data)
    assert [(e.title, e.removal, e.announced) for e in entries] == [(p.title, p.removal, p.announced) for p in parsed]
    assert [e.anchor for e in entries] == [p.anchor or slug(p.title) for p in parsed]


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
