#!/bin/bash
curl -s --header "PRIVATE-TOKEN: $GITLAB_TOKEN" \
  "$GITLAB_URL/api/v4/runners/all?status=paused&per_page=100" | jq -r '.[].description'
