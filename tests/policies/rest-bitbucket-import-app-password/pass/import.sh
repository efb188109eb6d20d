#!/bin/sh
# ok: rest-bitbucket-import-app-password
curl --request POST --header "PRIVATE-TOKEN: $TOKEN" "$GITLAB_URL/api/v4/import/bitbucket" --form "bitbucket_email=$BB_EMAIL" --form "bitbucket_api_token=$BB_TOKEN" --form "repo_path=acme/app" --form "target_namespace=acme"
