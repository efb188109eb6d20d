#!/bin/sh
# expect: rest-zentao-integration col=17
glab api -X PUT projects/:id/integrations/zentao -f url=https://zentao.example.com -f api_token="$ZT"
# expect: rest-zentao-integration col=38
curl --request DELETE "$CI_API_V4_URL/projects/$CI_PROJECT_ID/services/zentao"
