#!/bin/sh
# ok: gitlab-rake-geo-db-tasks
gitlab-rake db:migrate:geo
# ok: gitlab-rake-geo-db-tasks
gitlab-rake geo:status
