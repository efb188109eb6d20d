#!/bin/bash
set -e

setup_runner() {
  if [[ ! -e ${RUNNER_HOME}/config.toml ]]; then
    sudo -HEu ${RUNNER_USER} \
      gitlab-ci-multi-runner register --config ${RUNNER_HOME}/config.toml \
        -n -u "${COORDINATOR_URL}" -r "${ENROLMENT_TOKEN}" --name "${RUNNER_NAME}" --executor shell
  fi
}

setup_runner
exec gitlab-ci-multi-runner run --working-directory ${RUNNER_HOME}
