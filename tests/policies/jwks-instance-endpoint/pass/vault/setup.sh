#!/bin/sh
set -eu
# ok: jwks-instance-endpoint
vault write auth/jwt/config jwks_url="https://gitlab.example.com/oauth/discovery/keys" bound_issuer="https://gitlab.example.com"
# ok: jwks-instance-endpoint
curl -s "https://gitlab.example.com/-/jwks-rotation/status"
