#!/bin/sh
# expect: gitlab-rake-geo-housekeeping col=18
sudo gitlab-rake geo:git:housekeeping:full_repack
# expect: gitlab-rake-geo-housekeeping col=33
sudo -u git -H bundle exec rake geo:git:housekeeping:gc RAILS_ENV=production
# expect: gitlab-rake-geo-housekeeping col=18
sudo gitlab-rake geo:verification:wiki:reset
# expect: gitlab-rake-geo-housekeeping col=13
gitlab-rake geo:run_orphaned_project_registry_cleaner
