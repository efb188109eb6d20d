#!/bin/sh
## Links in comments are documentation, nothing runs them:
# ok: legacy-urls-without-delimiter
## See https://gitlab.example.com/acme/omnibus/raw/main/files/template/gitlab.rb.template
    # ok: legacy-urls-without-delimiter
    # Tracked in https://gitlab.example.com/acme/shop/issues/18771
# ok: legacy-urls-without-delimiter
curl --fail "https://gitlab.example.com/acme/shop/-/pipelines/1"
