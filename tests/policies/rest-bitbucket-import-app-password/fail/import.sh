#!/bin/sh
# expect: rest-bitbucket-import-app-password col=137
curl --request POST --header "PRIVATE-TOKEN: $TOKEN" "$GITLAB_URL/api/v4/import/bitbucket" --form "bitbucket_username=$BB_USER" --form "bitbucket_app_password=$BB_PASS" --form "repo_path=acme/app" --form "target_namespace=acme"
