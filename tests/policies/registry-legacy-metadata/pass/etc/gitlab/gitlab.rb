registry_external_url 'https://registry.example.com'
registry['database'] = {
  # ok: registry-legacy-metadata
  'enabled' => true,
  'host' => 'db.example.com',
}
