#!/usr/bin/env bash
set -euo pipefail

TOKEN=$(docker exec gitlab gitlab-rails runner "puts Gitlab::CurrentSettings.current_application_settings.runners_registration_token")

docker exec ci-runner gitlab-runner register \
    --non-interactive \
    --url "http://gitlab:8080" \
    --registration-token "$TOKEN" \
    --executor docker \
    --docker-image "python:3.12-slim" \
    --description "review-runner" \
    --tag-list "review" \
    --run-untagged=true
