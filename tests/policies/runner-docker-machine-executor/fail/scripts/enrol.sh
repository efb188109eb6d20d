#!/bin/sh
set -eu
# expect: runner-docker-machine-executor col=79
gitlab-runner register --non-interactive --url "$CI_SERVER_URL" --token "$RT" --executor docker+machine
# expect: runner-docker-machine-executor col=79
gitlab-runner register --non-interactive --url "$CI_SERVER_URL" --token "$RT" --executor="docker+machine"
# expect: runner-docker-machine-executor col=1
RUNNER_EXECUTOR=docker+machine gitlab-runner register --non-interactive --url "$CI_SERVER_URL" --token "$RT"
