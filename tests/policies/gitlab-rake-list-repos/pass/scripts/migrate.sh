#!/bin/sh
# ok: gitlab-rake-list-repos
sudo gitlab-rake gitlab:check SANITIZE=true
