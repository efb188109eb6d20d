#!/bin/sh
# ok: rest-subscription-endpoints
curl --header "PRIVATE-TOKEN: $ADMIN_TOKEN" "$GITLAB_URL/api/v4/namespaces/42"
