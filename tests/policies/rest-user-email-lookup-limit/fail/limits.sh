#!/bin/sh
# expect: rest-user-email-lookup-limit col=94
curl --request PUT --header "PRIVATE-TOKEN: $TOKEN" "$GITLAB_URL/api/v4/application/settings?user_email_lookup_limit=30"
# expect: rest-user-email-lookup-limit col=87
curl --header "PRIVATE-TOKEN: $TOKEN" "$GITLAB_URL/api/v4/application/settings" | jq .user_email_lookup_limit
