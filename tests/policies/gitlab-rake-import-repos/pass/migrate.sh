#!/bin/sh
set -e
# ok: gitlab-rake-import-repos
sudo gitlab-rake gitlab:import_export:data
