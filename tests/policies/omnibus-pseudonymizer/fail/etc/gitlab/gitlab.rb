# expect: omnibus-pseudonymizer col=14
gitlab_rails['pseudonymizer_manifest'] = 'config/pseudonymizer.yml'
# expect: omnibus-pseudonymizer col=14
gitlab_rails['pseudonymizer_upload_remote_directory'] = 'gitlab-elt'
# expect: omnibus-pseudonymizer col=14
gitlab_rails['pseudonymizer_upload_connection'] = {
  'provider' => 'AWS',
  'region' => 'eu-west-1',
}
