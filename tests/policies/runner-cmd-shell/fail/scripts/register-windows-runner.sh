#!/bin/sh
set -eu
# expect: runner-cmd-shell col=89
gitlab-runner register --non-interactive --url "$CI_SERVER_URL" --token "$RUNNER_TOKEN" --shell cmd --executor shell
