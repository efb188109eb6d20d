external_url 'https://gitlab.example.com'
gitlab_rails['time_zone'] = 'UTC'
