#!/bin/sh
set -e
# expect: gitlab-ctl-promote-commands col=17
sudo gitlab-ctl promote-db
# expect: gitlab-ctl-promote-commands col=12
gitlab-ctl promote-to-primary-node --skip-preflight-checks
