#!/bin/sh
# ok: rest-user-email-lookup-limit
curl --request PUT --header "PRIVATE-TOKEN: $TOKEN" "$GITLAB_URL/api/v4/application/settings?search_rate_limit=30"
