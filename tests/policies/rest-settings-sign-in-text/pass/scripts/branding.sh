#!/bin/sh
# ok: rest-settings-sign-in-text
curl --request PUT --header "PRIVATE-TOKEN: $ADMIN_TOKEN" --data "description=Welcome to ACME" "$GITLAB_URL/api/v4/application/appearance"
