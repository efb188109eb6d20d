#!/bin/sh
# ok: runner-docker-machine-off-peak
gitlab-runner register --non-interactive --url "$CI_SERVER_URL" --token "$RUNNER_TOKEN" \
  --executor docker --docker-image alpine:3.20 --machine-idle-nodes 1
