# ok: omnibus-pseudonymizer
gitlab_rails['backup_upload_remote_directory'] = 'gitlab-backups'
# gitlab_rails['pseudonymizer_manifest'] = 'config/pseudonymizer.yml'
