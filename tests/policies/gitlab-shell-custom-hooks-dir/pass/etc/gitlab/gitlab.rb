gitlab_shell['log_directory'] = "/var/log/gitlab/gitlab-shell/"
# ok: gitlab-shell-custom-hooks-dir
gitaly['configuration'] = { hooks: { custom_hooks_dir: "/var/opt/gitlab/custom_hooks" } }
