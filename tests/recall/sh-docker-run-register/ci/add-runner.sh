#!/usr/bin/env bash
set -e

enrol() {
	NAME=$1
	TOKEN=$2
	docker run --rm -it \
		-v /srv/runner:/etc/gitlab-runner \
		gitlab/gitlab-runner:latest register \
		--non-interactive \
		--url "$COORDINATOR" \
		--registration-token $TOKEN \
		--name "$NAME" \
		--tag-list "linux, docker" \
		--executor "docker" \
		--docker-image "alpine:3" \
		--run-untagged="true" \
		--locked="false"
}

enrol "builder" "$1"
