# ok: omnibus-spamcheck
gitlab_rails['akismet_enabled'] = true
