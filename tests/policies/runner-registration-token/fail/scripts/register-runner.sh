#!/usr/bin/env bash
set -euo pipefail
# expect: runner-registration-token col=8
export REGISTRATION_TOKEN="${1:?registration token}"
sudo gitlab-runner register --non-interactive --url "https://gitlab.example.com" --executor shell
