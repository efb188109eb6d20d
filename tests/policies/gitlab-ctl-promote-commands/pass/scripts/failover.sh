#!/bin/sh
set -e
# ok: gitlab-ctl-promote-commands
gitlab-ctl geo promote --force
