#!/bin/sh
# ok: oauth-ropc-password-grant
curl --data "grant_type=authorization_code&code=$CODE&redirect_uri=$REDIRECT" "$GITLAB_URL/oauth/token"
