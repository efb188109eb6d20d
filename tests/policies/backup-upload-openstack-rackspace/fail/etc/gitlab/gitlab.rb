gitlab_rails['backup_upload_connection'] = {
  # expect: backup-upload-openstack-rackspace col=3
  'provider' => 'OpenStack',
  'openstack_auth_url' => 'https://keystone.example.com/v3',
}
