#!/bin/sh
set -eu
# expect: jwks-instance-endpoint col=65
vault write auth/jwt/config jwks_url="https://gitlab.example.com/-/jwks" bound_issuer="https://gitlab.example.com"
