gitlab_rails['backup_upload_connection'] = {
  # ok: backup-upload-openstack-rackspace
  'provider' => 'AWS',
  'endpoint' => 'https://swift-s3.example.com',
}
