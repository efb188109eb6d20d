registry_external_url 'https://registry.example.com'
registry['database'] = {
  # expect: registry-legacy-metadata col=3
  'enabled' => false,
}
