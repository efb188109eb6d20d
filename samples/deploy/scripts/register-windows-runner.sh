#!/usr/bin/env bash
# Registers the build VM's runner; run in Git Bash on the Windows host after installing the service.
set -euo pipefail
runner="/c/Program Files/GitLab-Runner/gitlab-runner.exe"
"$runner" stop || true
"/c/Program Files/GitLab-Runner/gitlab-runner.exe" register --non-interactive \
  --url "https://gitlab.larkspur.example" \
  --token "${RUNNER_AUTH_TOKEN}" \
  --executor shell \
  --shell cmd
"$runner" start
