#!/bin/sh
# ok: rest-projects-pull-mirror-settings
curl --request PUT --header "PRIVATE-TOKEN: $TOKEN" --data "enabled=true" --data "url=$UPSTREAM" "$GITLAB_URL/api/v4/projects/$PROJECT_ID/mirror/pull"
