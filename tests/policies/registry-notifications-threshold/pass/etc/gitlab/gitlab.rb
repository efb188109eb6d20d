registry['notifications'] = [
  {
    'name' => 'geo_event',
    'url' => 'https://gitlab.example.com/api/v4/container_registry_event/events',
    # ok: registry-notifications-threshold
    'maxretries' => 5,
    'backoff' => '1s',
  }
]
# ok: registry-notifications-threshold
registry['default_notifications_maxretries'] = 5
