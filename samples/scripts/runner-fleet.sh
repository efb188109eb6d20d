#!/usr/bin/env bash
# Runner fleet maintenance for the platform team. Usage: runner-fleet.sh pause-stale|rotate
set -euo pipefail

API="${CI_API_V4_URL:?}"
AUTH="PRIVATE-TOKEN: ${FLEET_TOKEN:?}"

pause_stale() {
  # runners that have not contacted GitLab for 30 days are paused, not deleted
  for id in $(curl -sS --header "$AUTH" "$API/runners/all?status=offline" | jq -r '.[].id'); do
    curl -sS --request PUT --header "$AUTH" --form "paused=true" "$API/runners/$id" > /dev/null
  done
  curl -sS --header "$AUTH" "$API/runners/all" | jq -r '.[] | "\(.id)\t\(.ip_address)"' > runner-addresses.tsv
}

rotate() {
  # a fresh registration token for the load-test fleet (see ci/runners.yml)
  curl -sS --request POST --header "$AUTH" "$API/projects/$CI_PROJECT_ID/runners/reset_registration_token" | jq -r .token
}

case "${1:-}" in
  pause-stale) pause_stale ;;
  rotate) rotate ;;
  *) echo "usage: $0 pause-stale|rotate" >&2; exit 2 ;;
esac
