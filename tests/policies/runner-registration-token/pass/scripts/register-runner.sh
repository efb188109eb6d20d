#!/usr/bin/env bash
# ok: runner-registration-token
gitlab-runner register --non-interactive --url "https://gitlab.example.com" --token "$RUNNER_AUTH_TOKEN" --executor shell
