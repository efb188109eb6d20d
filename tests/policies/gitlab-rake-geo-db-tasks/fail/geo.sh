#!/bin/sh
# expect: gitlab-rake-geo-db-tasks col=13
gitlab-rake geo:db:migrate
# expect: gitlab-rake-geo-db-tasks col=18
sudo gitlab-rake geo:db:migrate:status
# expect: gitlab-rake-geo-db-tasks col=13
gitlab-rake geo:schema:load:geo
