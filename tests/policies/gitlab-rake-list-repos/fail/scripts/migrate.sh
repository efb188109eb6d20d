#!/bin/sh
# expect: gitlab-rake-list-repos col=18
sudo gitlab-rake gitlab:list_repos SINCE=2024-01-01 > repos.txt
