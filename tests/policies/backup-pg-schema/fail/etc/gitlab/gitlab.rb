gitlab_rails['backup_path'] = '/var/opt/gitlab/backups'
# expect: backup-pg-schema col=14
gitlab_rails['backup_pg_schema'] = 'backup'
