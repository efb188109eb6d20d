registry_external_url 'https://registry.example.com'
registry['notifications'] = [
  {
    'name' => 'geo',
    'url' => 'https://geo.example.com/notify',
    'maxretries' => 5,
    'backoff' => '1s'
  }
]
registry['default_notifications_maxretries'] = 5
