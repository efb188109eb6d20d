#!/bin/sh
# expect: rest-runner-registration-endpoint col=95
wget --post-data "token=${REG_TOKEN}&description=edge" -O runner.json "${CI_SERVER_URL}/api/v4/runners"
