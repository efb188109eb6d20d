#!/bin/sh
# ok: gitlab-rake-geo-housekeeping
sudo gitlab-rake gitlab:geo:check
# ok: gitlab-rake-geo-housekeeping
sudo gitlab-rake geo:status
