#!/bin/sh
# expect: rest-subscription-endpoints col=121
curl --request PUT --header "PRIVATE-TOKEN: $ADMIN_TOKEN" --data "shared_runners_minutes_limit=2000" "$GITLAB_URL/api/v4/namespaces/42"
# expect: rest-subscription-endpoints col=64
curl --header "PRIVATE-TOKEN: $ADMIN_TOKEN" "$GITLAB_URL/api/v4/namespaces/42/gitlab_subscription"
