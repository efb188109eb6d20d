external_url 'https://gitlab.example.com'
gitlab_rails['time_zone'] = 'UTC'
gitlab_rails['initial_shared_runners_registration_token'] = "token-from-vault"
