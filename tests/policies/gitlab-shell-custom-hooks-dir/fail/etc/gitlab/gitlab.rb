# expect: gitlab-shell-custom-hooks-dir col=14
gitlab_shell['custom_hooks_dir'] = "/var/opt/gitlab/custom_hooks"
