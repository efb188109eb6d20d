"""The `gitlab` gem's client methods, mapped to the REST endpoints they call.

`Gitlab.update_runner(42, active: false)` is `PUT /runners/:id` with `active`;
`Gitlab.runners(status: "paused")` is `GET /runners?status=paused`. Method names, paths and which
argument holds the options are the gem's own (NARKOZ/gitlab, `lib/gitlab/client/runners.rb` and
`merge_requests.rb`). Only methods that reach an endpoint some policy names are listed.
"""

from __future__ import annotations

# method → (HTTP method, path with `{}` for each id argument, index of the options argument or None)
METHODS: dict[str, tuple[str, str, int | None]] = {
    "runners": ("GET", "/runners", 0),
    "all_runners": ("GET", "/runners/all", 0),
    "runner": ("GET", "/runners/{}", None),
    "update_runner": ("PUT", "/runners/{}", 1),
    "project_runners": ("GET", "/projects/{}/runners", 1),
    "group_runners": ("GET", "/groups/{}/runners", 1),
    "register_runner": ("POST", "/runners", 1),
    "merge_request_changes": ("GET", "/projects/{}/merge_requests/{}/changes", None),
}
# How a script gets a client: `Gitlab.client(…)`, `Gitlab::Client.new(…)`; `Gitlab.x` itself works too.
CLIENT_MODULE = "Gitlab"
