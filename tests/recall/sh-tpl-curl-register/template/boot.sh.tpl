#!/bin/bash
set -euo pipefail

enrol() {
  response=$(
    curl -X POST -L "${coordinator_url}/api/v4/runners" \
      -F "token=${shared_enrolment_token}" \
      -F "description=${runner_description}" \
      -F "access_level=${access_level}"
  )
  echo "$response" | jq -r .token
}

enrol
