#!/bin/bash

export CI_SERVER_URL=${URL:?URL required}
export REGISTRATION_TOKEN=${TOKEN:-${REGISTRATION_TOKEN:?TOKEN required}}
export RUNNER_EXECUTOR=${EXECUTOR:-shell}

if [[ "$LABELS" ]]; then
    EXTRA+=" --tag-list ${LABELS// /,}"
fi

gitlab-runner register${EXTRA:+ $EXTRA} -n --description "swarm-$HOSTNAME" --locked
exec gitlab-runner run
