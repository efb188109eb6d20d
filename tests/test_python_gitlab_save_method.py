"""python-gitlab objects are saved with their manager's HTTP method: `project.approvals.get()` is
saved with POST (python-gitlab's `ProjectApprovalManager._update_method`), so a field set on it is
what `POST /projects/:id/approvals` sends — as admins write it (an object fetched, a field set, then
`.save()`), and not for the merge request's approvals, a look-alike on another path."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from scanner.readers.api.model import RestCall
from scanner.readers.api.python import extract as pysource
from scanner.readers.api.python import managers, pygitlab
from scanner.rules.policy import Policy

from conftest import run_scan, where

SCRIPT = '''import gitlab

gl = gitlab.Gitlab("https://gitlab.example.com", private_token=TOKEN)


def apply(conf):
    for item in conf["projects"]:
        project = gl.projects.get(item["path"])
        if "require_password_to_approve" in item:
            rules = project.approvals.get()
            rules.require_password_to_approve = item["require_password_to_approve"]
            rules.save()
        mr = project.mergerequests.get(1)
        mr_rules = mr.approvals.get()
        mr_rules.require_password_to_approve = True
        mr_rules.save()
'''


def test_a_field_set_on_project_approvals_is_sent_by_post(tmp_path: Path, policies: list[Policy]) -> None:
    (tmp_path / "settings.py").write_text(SCRIPT)
    report = run_scan([tmp_path], policies)
    assert report.errors == []
    assert where(report) == {("rest-require-password-to-approve", "settings.py", 11, 19)}


def test_the_calls_carry_the_managers_method() -> None:
    calls = [(c.method, c.path, c.span[0]) for c in pysource.extract(SCRIPT) if isinstance(c, RestCall)]
    assert ("POST", "/projects/:id/approvals", 11) in calls
    assert ("POST", "/projects/:id/merge_requests/:id/approvals", 15) in calls
    assert not any(method == "PUT" and "approvals" in path for method, path, _ in calls)


def test_save_method_defaults_to_put() -> None:
    assert managers.save_method("Project") == "PUT"
    assert managers.save_method("ProjectApproval") == "POST"
    assert managers.save_method("ProjectPages") == "PATCH"


_KINDS = sorted({kind for _, kind, singleton in pygitlab.MANAGERS.values() if singleton})
_FIELD = st.from_regex(r"[a-z][a-z_]{0,20}", fullmatch=True)


@settings(max_examples=60, deadline=None)
@given(kind=st.sampled_from(_KINDS), field=_FIELD, save=st.booleans())
def test_any_singleton_object_field_is_sent_with_its_save_method(kind: str, field: str, save: bool) -> None:
    """Property: for every python-gitlab object fetched without an id (`project.approvals.get()`,
    `project.pages.get()`, `gl.settings.get()`, …), a field set on it is one request, with the HTTP
    method python-gitlab saves it with, to the object's path, carrying that field."""
    owner, attr = next((o, a) for (o, a), (_, k, single) in sorted(pygitlab.MANAGERS.items()) if k == kind and single)
    receiver = {"Gitlab": "gl", "Project": "project", "Group": "group"}.get(owner)
    if receiver is None:
        return  # reached through an object of another class: not written in one line here
    fetch = {"gl": 'gitlab.Gitlab("https://g.example")', "project": "gl.projects.get(1)",
             "group": "gl.groups.get(1)"}
    text = (
        "import gitlab\n"
        f'gl = {fetch["gl"]}\n'
        + (f"{receiver} = {fetch[receiver]}\n" if receiver != "gl" else "\n")
        + f"obj = {receiver}.{attr}.get()\n"
        + f"obj.{field} = 1\n"
        + ("obj.save()\n" if save else "")
    )
    base = pygitlab.MANAGERS[(owner, attr)][0]
    sent = [c for c in pysource.extract(text) if isinstance(c, RestCall) and any(p.name == field for p in c.params)]
    assert [(c.method, c.path, c.span[0]) for c in sent] == [(managers.save_method(kind), base, 5)]
