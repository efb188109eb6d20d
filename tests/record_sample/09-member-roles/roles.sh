#!/bin/sh
# Create the "Guest + code" custom role in our top-level group.
curl --fail --request POST \
  --header "PRIVATE-TOKEN: $GITLAB_TOKEN" \
  --header "Content-Type: application/json" \
  --data '{"name": "Guest + code", "base_access_level": 10, "read_code": true}' \
  "$GITLAB_URL/api/v4/groups/$GROUP_ID/member_roles"
