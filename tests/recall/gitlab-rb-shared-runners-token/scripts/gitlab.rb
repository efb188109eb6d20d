registry_external_url 'http://127.0.0.1:5050'
registry['enable'] = true

gitlab_rails['initial_shared_runners_registration_token'] = "TESTSUITE_SHARED_TOKEN_0001"

gitlab_rails['application_settings_cache_seconds'] = 0
