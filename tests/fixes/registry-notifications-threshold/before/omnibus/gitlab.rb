registry_external_url 'https://registry.example.com'
registry['notifications'] = [
  {
    'name' => 'geo',
    'url' => 'https://geo.example.com/notify',
    'threshold' => 5,
    'backoff' => '1s'
  }
]
registry['default_notifications_threshold'] = 5
