#!/bin/sh
# expect: rest-slack-slash-commands col=72
curl --request PUT --header "PRIVATE-TOKEN: $TOKEN" "$GITLAB_URL/api/v4/projects/42/integrations/slack-slash-commands" --data "token=$SLACK_TOKEN"
