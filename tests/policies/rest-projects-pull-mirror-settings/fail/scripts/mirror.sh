#!/bin/sh
# expect: rest-projects-pull-mirror-settings col=61
curl --request PUT --header "PRIVATE-TOKEN: $TOKEN" --data "mirror=true" --data "import_url=$UPSTREAM" "$GITLAB_URL/api/v4/projects/$PROJECT_ID"
# expect: rest-projects-pull-mirror-settings col=61
curl --request PUT --header "PRIVATE-TOKEN: $TOKEN" --data "mirror_trigger_builds=true" "$GITLAB_URL/api/v4/projects/$PROJECT_ID"
