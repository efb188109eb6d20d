#!/bin/sh
# expect: rest-settings-sign-in-text col=67
curl --request PUT --header "PRIVATE-TOKEN: $ADMIN_TOKEN" --data "sign_in_text=Welcome to ACME" "$GITLAB_URL/api/v4/application/settings"
# expect: rest-settings-sign-in-text col=77
curl --request PUT --header "PRIVATE-TOKEN: $ADMIN_TOKEN" --data-urlencode "help_text=Ask #it-help" "$GITLAB_URL/api/v4/application/settings"
