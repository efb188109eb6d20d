#!/bin/sh
set -eu
# expect: runner-docker-machine-off-peak col=68
# expect: runner-docker-machine-off-peak col=112
# expect: runner-docker-machine-executor col=42
gitlab-runner register --non-interactive --executor docker+machine --machine-off-peak-timezone "Europe/Berlin" --machine-off-peak-idle-count 1
# expect: runner-docker-machine-off-peak col=8
export MACHINE_OFF_PEAK_IDLE_TIME=600
# expect: runner-docker-machine-executor col=42
gitlab-runner register --non-interactive --executor docker+machine
