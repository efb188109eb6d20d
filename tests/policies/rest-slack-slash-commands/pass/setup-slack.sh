#!/bin/sh
# ok: rest-slack-slash-commands
curl --request PUT --header "PRIVATE-TOKEN: $TOKEN" "$GITLAB_URL/api/v4/projects/42/integrations/gitlab-slack-application"
