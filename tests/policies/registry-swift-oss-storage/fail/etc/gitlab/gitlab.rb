registry['storage'] = {
  # expect: registry-swift-oss-storage col=3
  'swift' => {
    'authurl' => 'https://keystone.example.com/v3',
    'username' => 'registry',
    'password' => 'S3CRET-SWIFT-pass',
    'container' => 'registry',
  }
}
