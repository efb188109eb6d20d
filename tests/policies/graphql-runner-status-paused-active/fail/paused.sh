#!/bin/sh
# expect: graphql-runner-status-paused-active col=72
curl -s -X POST "$CI_API_GRAPHQL_URL" -d '{"query": "{ runners(status: PAUSED) { nodes { id } } }"}'
