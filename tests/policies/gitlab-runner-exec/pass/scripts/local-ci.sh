#!/bin/sh
set -e
# ok: gitlab-runner-exec
gitlab-runner register --non-interactive --url "$CI_SERVER_URL" --token "$RUNNER_TOKEN"
# ok: gitlab-runner-exec
echo "gitlab-runner exec is gone; use glab ci lint"
# ok: gitlab-runner-exec
glab ci lint .gitlab-ci.yml
