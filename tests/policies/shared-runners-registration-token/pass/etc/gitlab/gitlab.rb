external_url 'https://gitlab.example.com'
# ok: shared-runners-registration-token
gitlab_rails['initial_shared_runners_registration_token'] = ""
