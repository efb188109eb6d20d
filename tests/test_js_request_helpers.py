"""A JavaScript/TypeScript file's own request helpers (scanner.readers.api.javascript): a function or
method that fetches `<base><its first parameter>` makes each call with a path relative to GitLab's API
a REST call of that path, placed where the path is written."""

from __future__ import annotations

from scanner.readers.api import javascript
from scanner.readers.api.model import RestCall


def _calls(text: str) -> list[tuple[str, str, int, int, list[str]]]:
    return [(c.method, c.path, c.span[0], c.span[1], [p.name for p in c.params])
            for c in javascript.extract(text) if isinstance(c, RestCall)]


CLIENT = '''\
export class Client {
  constructor(private readonly base: string, private readonly token: string) {}

  async changes(project: string, iid: string): Promise<{ diff: string }[]> {
    const body = await this.request<{ changes: { diff: string }[] }>(
      `/projects/${project}/merge_requests/${iid}/changes`
    );
    return body.changes;
  }

  async archive(id: number): Promise<void> {
    await this.request<void>(`/projects/${id}/integrations/slack`, {
      method: "PUT",
      body: JSON.stringify({ webhook: "x", active: true }),
    });
  }

  private async request<T>(path: string, init: RequestInit = {}): Promise<T> {
    const response = await this.raw(path, init);
    return (await response.json()) as T;
  }

  private async raw(path: string, init: RequestInit = {}): Promise<Response> {
    const url = `${this.base.replace(/\\/$/, "")}${path}`;
    const headers = new Headers(init.headers);
    headers.set("PRIVATE-TOKEN", this.token);
    return fetch(url, { ...init, headers });
  }
}
'''


def test_a_helper_of_a_helper_around_fetch() -> None:
    assert _calls(CLIENT) == [
        ("GET", "/projects/{}/merge_requests/{}/changes", 6, 8, []),
        ("PUT", "/projects/{}/integrations/slack", 12, 31, ["webhook", "active"]),
    ]


def test_functions_and_arrow_functions() -> None:
    text = '''\
const BASE = process.env.GITLAB_URL;
const headers = { "JOB-TOKEN": process.env.CI_JOB_TOKEN };
async function api(path, init = {}) {
  return fetch(`${BASE}/api/v4${path}`, { ...init, headers });
}
const gl = async (path: string): Promise<Response> => {
  return fetch(BASE + path, { headers });
};
api("/projects/1/merge_requests/2/changes");
gl(`/runners/${id}`, { method: "DELETE" });
'''
    assert _calls(text) == [
        ("GET", "/projects/1/merge_requests/2/changes", 9, 6, []),
        ("DELETE", "/runners/{}", 10, 5, []),
    ]


def test_what_is_not_a_call_of_gitlab_api_through_a_helper() -> None:
    text = '''\
class Other {
  request(path: string) { return fetch(`${this.base}${path}`); }
  log(path: string) { console.log(`${path}`); }
  go() {
    this.request("/projects/1/merge_requests/2/changes");
  }
}
'''
    assert _calls(text) == []  # no sign of GitLab's API in the file
    anchored = text.replace("class Other {", 'const H = { "PRIVATE-TOKEN": t };\nclass Other {') + '''\
other.request("/projects/1/merge_requests/2/changes");
this.log("/projects/1/merge_requests/2/changes");
this.request("https://example.com/projects/1/merge_requests/2/changes");
if (x) { this.request(name); }
'''
    assert _calls(anchored) == [("GET", "/projects/1/merge_requests/2/changes", 6, 19, [])]
