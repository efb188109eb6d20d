#!/bin/sh
# ok: rest-zentao-integration
curl -s "$CI_API_V4_URL/projects/$CI_PROJECT_ID/integrations/jira"
# ok: rest-zentao-integration
curl -s "$CI_API_V4_URL/projects/$CI_PROJECT_ID/integrations"
