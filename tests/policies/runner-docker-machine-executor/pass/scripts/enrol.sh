#!/bin/sh
set -eu
# ok: runner-docker-machine-executor
gitlab-runner register --non-interactive --url "$CI_SERVER_URL" --token "$RT" --executor docker-autoscaler
# ok: runner-docker-machine-executor
RUNNER_EXECUTOR=docker gitlab-runner register --non-interactive --url "$CI_SERVER_URL" --token "$RT"
# ok: runner-docker-machine-executor
echo "--executor docker+machine"
