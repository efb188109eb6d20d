#!/bin/sh
# Run the unit test job locally before pushing.
gitlab-runner exec docker --docker-pull-policy if-not-present unit-tests
