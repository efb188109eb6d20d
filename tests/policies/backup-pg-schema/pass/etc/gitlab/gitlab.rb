# ok: backup-pg-schema
gitlab_rails['backup_path'] = '/var/opt/gitlab/backups'
