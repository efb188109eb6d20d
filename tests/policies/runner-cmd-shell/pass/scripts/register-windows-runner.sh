#!/bin/sh
# ok: runner-cmd-shell
gitlab-runner register --non-interactive --url "$CI_SERVER_URL" --token "$RUNNER_TOKEN" --shell powershell --executor shell
# ok: runner-cmd-shell
echo "--shell cmd is gone since 17.0"
