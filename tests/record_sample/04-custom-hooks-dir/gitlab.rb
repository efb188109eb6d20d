external_url 'https://gitlab.example.com'

### GitLab Shell settings
gitlab_shell['custom_hooks_dir'] = "/opt/gitlab-hooks"
gitlab_shell['log_directory'] = "/var/log/gitlab/gitlab-shell/"
