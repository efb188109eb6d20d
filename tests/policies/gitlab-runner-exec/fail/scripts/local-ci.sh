#!/bin/sh
set -e
# expect: gitlab-runner-exec col=15
gitlab-runner exec docker unit-tests
# expect: gitlab-runner-exec col=20
sudo gitlab-runner exec shell lint --env "FOO=bar"
