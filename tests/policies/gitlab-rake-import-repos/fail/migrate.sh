#!/bin/sh
set -e
# expect: gitlab-rake-import-repos col=18
sudo gitlab-rake gitlab:import:repos["/var/opt/gitlab/git-data/repository-import-2023-01-01"]
# expect: gitlab-rake-import-repos col=33
sudo -u git -H bundle exec rake gitlab:import:repos RAILS_ENV=production
