#!/usr/bin/env bash
set -euo pipefail
for id in $(curl -s --header "PRIVATE-TOKEN: $TOKEN" "$CI_API_V4_URL/runners?type=project_type" | jq -r '.[].id'); do
  curl -s --request PUT --header "PRIVATE-TOKEN: $TOKEN" --data "active=false" "$CI_API_V4_URL/runners/$id"
done
