registry_external_url 'https://registry.example.com'
registry['storage'] = {
  's3' => {
    'bucket' => 'registry',
    'region' => 'us-east-1',
  }
}
