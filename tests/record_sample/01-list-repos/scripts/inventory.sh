#!/bin/bash
# Nightly inventory of the repositories on this host, for the storage report.
set -euo pipefail
sudo gitlab-rake gitlab:list_repos SINCE='Sep 1 2015' > /var/tmp/repos-$(date +%F).txt
wc -l /var/tmp/repos-*.txt
