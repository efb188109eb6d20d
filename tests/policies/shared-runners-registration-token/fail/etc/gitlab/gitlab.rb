external_url 'https://gitlab.example.com'
gitlab_rails['initial_root_password'] = "S3CRET-ROOT-pw"
# expect: shared-runners-registration-token col=14
gitlab_rails['initial_shared_runners_registration_token'] = "S3CRET-SHARED-token"
