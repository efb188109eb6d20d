#!/bin/sh
# expect: oauth-ropc-password-grant col=14
curl --data "grant_type=password&username=$GL_USER&password=$GL_PASS" "$GITLAB_URL/oauth/token"
