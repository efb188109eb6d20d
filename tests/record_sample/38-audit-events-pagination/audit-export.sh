#!/bin/bash
for page in 1 2 3 4 5; do
  curl -s --header "PRIVATE-TOKEN: $TOKEN" \
    "$GITLAB_URL/api/v4/groups/$GROUP_ID/audit_events?per_page=100&page=$page" >> audit.json
done
